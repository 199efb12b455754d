import Foundation
import HTTP

/// `GET /openapi.json`: the API contract (OpenAPI 3.1), the file kept in
/// the repository at `Sources/TrifactorServer/Resources/openapi.json`, read
/// once at start-up and answered from memory.
struct ContractRoutes {
    let document: [UInt8]

    /// - Throws: `ResourceFailure` when the bundle lacks the document.
    init() throws {
        document = try Self.load()
    }

    static func load() throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else {
            throw ResourceFailure(
                description: "The resource openapi.json is missing from trifactord's bundle: reinstall it.")
        }
        return Array(data)
    }

    func register(on router: inout Router) {
        let document = document
        router.add("GET", "/openapi.json", execution: .inline) { _ in
            Response(status: 200, headers: [("Content-Type", "application/json")], body: document)
        }
    }
}
