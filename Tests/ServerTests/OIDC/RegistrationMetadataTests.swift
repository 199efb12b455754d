import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// Dynamic registration reads metadata with the admin API's reader and still
/// refuses in RFC 7591's terms (§3.2.2).
@Suite("Dynamic registration's metadata")
struct RegistrationMetadataTests {
    @Test(
        "refusals are RFC 7591 errors (invalid_redirect_uri, invalid_client_metadata), and an operator's fields are ignored"
    )
    func refusals() throws {
        let configuration = TestServer.configuration {
            $0.oidc = true
            $0.publicURL = URL(string: "https://id.example")
            $0.registration = .open
        }
        try Backend.all[0].withServer(configuration) { server in
            func register(_ body: String) throws -> (Int, [String: Any]) {
                let answer = try server.send(
                    "POST", "/register", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
                return (answer.status, try answer.wireObject())
            }
            let (status, error) = try register(#"{"redirect_uris":["http://app.example/cb"]}"#)
            #expect(status == 400 && error["error"] as? String == "invalid_redirect_uri")
            for body in [
                #"{"redirect_uris":["https://app.example/cb"],"response_types":["token"]}"#,
                #"{"redirect_uris":["https://app.example/cb"],"jwks_uri":"https://app.example/jwks"}"#,
                #"{"redirect_uris":["https://app.example/cb"],"grant_types":["client_credentials"]}"#, "[1]", "{",
            ] {
                let (status, error) = try register(body)
                #expect(status == 400 && error["error"] as? String == "invalid_client_metadata", "\(body)")
            }
            let (created, client) = try register(
                #"{"redirect_uris":["https://app.example/cb"],"first_party":true,"client_id":"mine","client_name":null}"#
            )
            #expect(created == 201 && client["first_party"] == nil && client["client_id"] as? String != "mine")
            let id = try #require(client["client_id"] as? String)
            let stored = try server.database.transaction { try ClientRepository.find(id, on: $0) }
            #expect(stored?.firstParty == false && stored?.registeredBy == .dynamic)
        }
    }
}
