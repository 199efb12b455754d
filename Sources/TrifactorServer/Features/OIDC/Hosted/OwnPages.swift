import Core
import Crypto
import Foundation
import HTTP
import WebUI

/// Trifactor's own pages (a user's security page, the operator's console) sign people in through the hosted sign-in,
/// like any app, as one built-in first-party client. Its id holds a `:`, which no client id an operator or a
/// registration may choose does, so it cannot be registered, changed, deleted or named in an `/authorize` link;
/// only these pages start its flows. Its flows end in no code: the sign-in's session cookie is all these pages
/// need, so the browser goes straight back to the page.
enum OwnPages {
    /// The built-in client's id.
    static let clientID = "trifactor:pages"
    /// The pages it signs in for, and that its flows may return to.
    static let paths = ["/account", "/console"]

    /// The built-in client of the server at `issuer`, named `brand` on the sign-in pages.
    static func client(issuer: String, brand: String, now: Int64) -> OIDCClient {
        OIDCClient(
            id: clientID, name: brand, secretHash: nil, authMethod: .none, redirectURIs: paths.map { issuer + $0 },
            postLogoutRedirectURIs: [], grantTypes: [.authorizationCode], scopes: ["openid"], firstParty: true,
            profileInIDToken: false, idTokenAlgorithm: "ES256", jwks: nil, logoURI: nil, backchannelLogoutURI: nil,
            registrationTokenHash: nil, registeredBy: .host, createdAt: now, updatedAt: now)
    }

    /// Whether `id` is the built-in client's: refused by every command and API that changes clients.
    static func isBuiltIn(_ id: String) -> Bool { id == clientID }

    /// Whether `target` is an address under the own page `path` (its path, a page below it, a query) that a flow
    /// may return to: a local path, never another site's (no scheme, no `//`, no `\\`).
    static func isReturn(_ target: String, under path: String) -> Bool {
        guard target == path || target.hasPrefix(path + "/") || target.hasPrefix(path + "?"),
            target.utf8.count <= 300
        else { return false }
        // The path part has no dot segment ("/console/../authorize" resolves outside the page) and no escape (which
        // could spell one, or a slash); the query may hold escapes.
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let segments = pathPart.split(separator: "/", omittingEmptySubsequences: false)
        return !target.contains("//") && !target.contains("\\") && !pathPart.contains("%")
            && !segments.contains { $0 == "." || $0 == ".." }
            && target.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f }
    }
}

extension Provider {
    /// Writes the built-in client for this issuer (at every start: the public URL may have changed).
    func ensureOwnPagesClient() throws {
        let client = OwnPages.client(issuer: issuer, brand: brand, now: flows.clock.now().millis)
        try flows.transactions.write { try ClientRepository.upsert(client, on: $0) }
    }
}

extension HostedRoutes {
    /// Signs this browser in for the own page at `path` (one of `OwnPages.paths`), then comes back to it.
    /// `level`: the proof the page needs (a second factor, or a hardware-bound key). `fresh`: the user proves who
    /// they are again now, whatever the session (OIDC Core §3.1.2.1 `max_age=0`), before a change that needs it.
    /// `then`: where under `path` the browser returns (the page that asked for the proof), kept in the flow's
    /// `state`, which never passes through the browser.
    func signInForOwnPage(
        _ request: Request, path: String, level: ACR = .mfa, fresh: Bool = false, then: String? = nil
    ) throws -> Response {
        precondition(OwnPages.paths.contains(path), "an own page")
        // PKCE is required of a public client; no code is ever issued to this one, so the verifier is dropped.
        let challenge = Base64URL.encode(SHA256.hash(Array(Base64URL.encode(flows.random.bytes(32)).utf8)))
        var parameters = [
            "client_id": OwnPages.clientID, "redirect_uri": issuer + path, "response_type": "code", "scope": "openid",
            "code_challenge": challenge, "code_challenge_method": "S256", "acr_values": level.rawValue,
        ]
        if fresh { parameters["max_age"] = "0" }
        if let then, OwnPages.isReturn(then, under: path) { parameters["state"] = then }
        return try begin(parameters, repeated: [], request, own: true)
    }

    /// The end of an own page's sign-in that did not sign in: cancelled, or a proof the account cannot give (a
    /// passkey or device key it has none of). A page that says so, with a way to try again.
    /// A browser still signed in that cancelled ("Confirm it's you") goes back to the page that asked; one that
    /// cannot give the proof is told why, signed in or not.
    func ownPageRefused(_ c: Context, _ code: String, _ request: Request?) throws -> Response {
        if code == "access_denied", let request, try signedIn(request) != nil {
            let path = URLComponents(string: c.flow.request.redirectURI)?.path ?? "/account"
            let back = OwnPages.paths.contains(path) ? path : "/account"
            let then = c.flow.request.state.flatMap { OwnPages.isReturn($0, under: back) ? $0 : nil }
            return Response(status: 303, headers: [("Location", then ?? back)])
        }
        let t = c.frame.text
        var frame = c.frame
        frame.flowID = nil
        frame.csrf = nil
        let path = URLComponents(string: c.flow.request.redirectURI)?.path ?? "/account"
        let key =
            code == "access_denied"
            ? "own.cancelled" : code == "unmet_authentication_requirements" ? "own.unmet" : "own.failed"
        let page = HostedPage.layout(
            t("\(key).title"), frame,
            [
                HostedPage.paragraph(t("\(key).body")),
                HostedPage.actions([
                    HostedPage.link(
                        t("own.again"), OwnPages.paths.contains(path) ? path : "/account", class: "button primary")
                ]),
            ])
        return HostedPage.response(page, frame, status: code == "access_denied" ? 200 : 403)
    }

    /// The last step of an own page's flow: no code; the flow ends and the browser returns to its page.
    func returnToOwnPage(_ c: Context) throws -> Response {
        try flows.end(c.flow.id)
        let path = URLComponents(string: c.flow.request.redirectURI)?.path ?? "/account"
        guard OwnPages.paths.contains(path) else { return Response(status: 303, headers: [("Location", "/account")]) }
        let then = c.flow.request.state.flatMap { OwnPages.isReturn($0, under: path) ? $0 : nil }
        return Response(status: 303, headers: [("Location", then ?? path)])
    }
}
