import Foundation
import HTTP
import Messaging
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// The API contract (`Resources/openapi.json`) against the routes trifactord
/// really registers: a route the document leaves out, or an operation the
/// server does not have, fails here. (Schemas and examples are checked
/// against live answers by the schemathesis run of the client tests.)
@Suite("The OpenAPI contract")
struct ContractTests {
    /// Every operation of the document, as `METHOD /pattern/:` (captures unnamed).
    static func documented() throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: Data(try ContractRoutes.load())) as? [String: Any]
        let paths = try #require(object?["paths"] as? [String: [String: Any]])
        var operations: Set<String> = []
        let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        for (path, item) in paths {
            let pattern = path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.hasPrefix("{") && segment.hasSuffix("}") ? ":" : String(segment)
            }.joined(separator: "/")
            for method in item.keys where methods.contains(method) {
                operations.insert("\(method.uppercased()) \(pattern)")
            }
        }
        return operations
    }

    @Test(
        "every route of a production server (providers configured, dev mode off) is in the document, and nothing else is"
    )
    func everyRouteIsDocumented() throws {
        let account = try ProviderAccount.parse("vonage://k@?from=Acme&secret_file=/s", readFile: { _ in "secret" })
        let configuration = TestServer.configuration {
            $0.dev = false
            $0.providers = [account]
        }
        try Backend.all[0].withServer(configuration) { server in
            let router = try Application.router(
                server.services, probe: ReadinessProbe(database: server.database, logger: server.log.logger))
            // Capture names may differ (one OpenAPI path serves POST …/:session and PATCH …/:id): compare shapes.
            let served = Set(
                router.table.map { route in
                    "\(route.method) "
                        + route.pattern.split(separator: "/", omittingEmptySubsequences: false)
                        .map { $0.hasPrefix(":") ? ":" : String($0) }.joined(separator: "/")
                })
            let documented = try Self.documented()
            #expect(served.subtracting(documented).sorted() == [], "routes the document does not describe")
            #expect(documented.subtracting(served).sorted() == [], "operations the server does not have")
        }
    }

    @Test("GET /openapi.json serves the document kept in the repository, byte for byte")
    func servedDocument() throws {
        try Backend.all[0].withServer { server in
            let answer = try server.send("GET", "/openapi.json")
            #expect(answer.status == 200 && answer.headers["content-type"] == "application/json")
            #expect(answer.body == (try ContractRoutes.load()))
        }
    }
}
