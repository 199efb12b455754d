import Foundation

/// The fields of clientDataJSON (WebAuthn §5.8.1) the relying party checks.
struct CollectedClientData: Decodable {
    let type: String
    let challenge: String
    let origin: String
    let crossOrigin: Bool?

    /// Parses clientDataJSON (UTF-8 JSON; unknown members are ignored).
    /// - Throws: `.malformed` when it is not JSON with string `type`,
    ///   `challenge` and `origin` members.
    static func parse(_ json: [UInt8]) throws(WebAuthnError) -> CollectedClientData {
        guard !json.isEmpty, json.count <= 64 * 1024 else {
            throw WebAuthnError(.malformed, detail: "clientDataJSON size")
        }
        do {
            return try JSONDecoder().decode(CollectedClientData.self, from: Data(json))
        } catch {
            throw WebAuthnError(.malformed, detail: "clientDataJSON: \(error)")
        }
    }
}
