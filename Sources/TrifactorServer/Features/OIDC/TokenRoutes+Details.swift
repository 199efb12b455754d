import Core
import Foundation
import HTTP
import JOSE
import Store
import WebUI

extension TokenRoutes {
    /// `POST /authorization_details/consume`: the client that holds an access token carrying approved authorization
    /// details (RFC 9396 §9.1) spends them, once, for the details it is about to carry out, which must be the
    /// approved ones (members in any order). The same rule as the API's bound actions, `AuthorizationService.consume`:
    /// a second spend is refused, and a different detail voids the approval, so one approval moves money once.
    /// Errors in RFC 6749 §5.2's form: `invalid_grant` (spent, expired, revoked or never approved),
    /// `invalid_authorization_details` (different details: now void), `invalid_request`.
    func consumeDetails(_ request: Request, _ form: Form) throws -> Response {
        try auditingRefusals(request, form) { try consume(request, form) }
    }

    private func consume(_ request: Request, _ form: Form) throws -> Response {
        let client = try fapiAuthenticated(request, form)
        // Money moves for a client that proves who it is: a public client's id is anyone's to send.
        guard !client.isPublic else {
            throw OAuthError(
                code: "unauthorized_client", description: "Only a client that authenticates may spend approvals.")
        }
        guard let token = form.raw("token"), !token.isEmpty else {
            throw OAuthError.invalidRequest("token is required: the access token that carries the details.")
        }
        guard let text = form.raw("authorization_details"), text.utf8.count <= 8192 else {
            throw OAuthError.invalidRequest("authorization_details is required: the details about to be carried out.")
        }
        let details: AuthorizationDetails
        do throws(AuthorizationError) {
            details = try AuthorizationDetails.parse(text, schemas: flows.detailsSchemas)
        } catch {
            throw OAuthError(error)
        }
        let now = clock.now().millis
        // Only the client the token was issued to holds it; anyone else learns nothing from the answer.
        guard let claims = minter.readAccessToken(token, audiences: Self.anyAudience, now: now),
            let jti = claims.jwtID, claims.string("client_id") == client.id, let dot = jti.firstIndex(of: ".")
        else { throw OAuthError.invalidGrant("The token is not a live access token of this client.") }
        // RFC 9449 §7: a token bound to a DPoP key is spent with a proof of that key, as it is used anywhere else.
        if let jkt = claims.values["cnf"]?.object?["jkt"]?.string {
            guard
                let proof = try proof(
                    request, path: "/authorization_details/consume", fapi2: client.fapi2 || fapi2Everywhere,
                    accessToken: token)
            else {
                throw OAuthError(code: "invalid_dpop_proof", description: "The token is DPoP-bound: send a proof.")
            }
            guard proof.thumbprint == jkt else {
                throw OAuthError(code: "invalid_dpop_proof", description: "The proof is not made with the token's key.")
            }
        }
        let grantID = String(jti[..<dot])
        let outcome = try transactions.write { db -> AuthorizationService.Consumption in
            guard try Self.isLive(jti: jti, on: db), let grant = try GrantRepository.find(grantID, on: db),
                let id = grant.authorizationID, let userID = grant.userID
            else { return .notFound }
            let spent = try AuthorizationService.consume(
                AuthorizationID(id), userID: UserID(userID), action: details.action(client: client.id), now: now,
                on: db)
            // Spent (or void): the grant ends, so no token of it says "approved" again, at introspection or anywhere.
            if spent != .notFound, try GrantRepository.revoke(grantID, at: now, on: db) {
                try AuditLog.append(
                    AuditContext(request).event(
                        .oidcTokenRevoked, .success, userID: UserID(userID),
                        detail: "client=\(client.id) grant=\(grantID) details \(spent == .used ? "spent" : "void")"),
                    at: now, on: db)
            }
            return spent
        }
        switch outcome {
        case .used:
            return Self.json(["status": .string("used"), "authorization_details": .array(details.items)])
        case .notFound:
            throw OAuthError.invalidGrant(
                "These authorization details cannot be spent: they were spent already, expired, or never approved.")
        case .mismatch:
            throw OAuthError(
                code: "invalid_authorization_details",
                description: "These are not the approved authorization details: the approval is now void.")
        }
    }
}
