import CommandLineKit
import Foundation
import TrifactorKit
import TrifactorKitVault

/// `trifactor login --browser`: Sign in with Trifactor through the system browser, as an app would. The CLI is a
/// public client of the provider: PKCE, a loopback redirect on a port the system picks (RFC 8252 §7.3), the ID
/// token verified against the provider's keys; the tokens go to the vault.
enum BrowserLoginCommand {
    /// The options `login` takes for this mode.
    static let valued: Set<String> = ["issuer", "client-id", "acr", "scopes"]
    /// How long the browser has to come back.
    static let timeout: TimeInterval = 300

    /// The vault item that holds the tokens of `profile`.
    static func itemName(_ profile: String) -> String { "\(profile).oidc-tokens" }

    static func run(_ a: Arguments, _ context: Context) async throws {
        try a.atMost(0)
        guard let issuerText = a.value("issuer") else { throw UsageError("--browser needs --issuer URL.") }
        guard let issuer = URL(string: issuerText), let scheme = issuer.scheme, ["http", "https"].contains(scheme),
            issuer.host != nil
        else { throw UsageError("--issuer must be an http:// or https:// URL.") }
        guard let clientID = a.value("client-id"), !clientID.isEmpty else {
            throw UsageError("--browser needs --client-id ID (a client registered with --auth-method none).")
        }
        let level = try a.value("acr").map(Self.level)
        let scopes = (a.value("scopes") ?? "openid").split(separator: " ").map(String.init)
        let loopback = try LoopbackRedirect(timeout: timeout) { url in Self.show(url, context) }
        let signIn = SignInWithTrifactor(
            issuer: issuer, clientID: clientID, redirectURI: loopback.redirectURI, scopes: scopes,
            crypto: OpenSSLTokenCrypto())
        let tokens = try await context.terminal.waiting(
            "Waiting for the browser", until: Date().addingTimeInterval(timeout)
        ) { try await signIn.signIn(using: loopback, level: level) }
        try await signedIn(tokens, context)
    }

    /// Keeps `tokens` in the vault (under `itemName`) and says who signed in (`login --browser` and `--device`).
    static func signedIn(_ tokens: SignInWithTrifactor.Tokens, _ context: Context) async throws {
        let stored = try JSONEncoder().encode(tokens)
        try await context.secrets.set(
            stored, for: itemName(context.profile), protection: .afterFirstUnlockThisDeviceOnly)
        let id = tokens.idToken
        let who = id.email.map { "\($0) (\(id.subject))" } ?? id.subject
        var json: [String: Any] = [
            "status": "signed_in", "issuer": id.issuer, "subject": id.subject, "amr": id.methods,
            "expires_at": ISO8601DateFormatter().string(from: id.expiresAt),
        ]
        json["acr"] = id.acr
        json["email"] = id.email
        json["session_id"] = id.sessionID
        context.output(
            "Signed in as \(who) at \(id.issuer) (acr \(id.acr ?? "none"), amr \(id.methods.joined(separator: "+"))).",
            json: json)
    }

    /// `--acr`: a level's URN, or its last word (`password`, `mfa`, `hwk`).
    static func level(_ text: String) throws -> AuthenticationLevel {
        if let level = AuthenticationLevel(rawValue: text) ?? AuthenticationLevel(rawValue: "urn:trifactor:acr:" + text)
        {
            return level
        }
        throw UsageError("--acr is one of urn:trifactor:acr:password, urn:trifactor:acr:mfa or urn:trifactor:acr:hwk.")
    }

    /// Prints the sign-in page's address and, on a desktop, opens it with `xdg-open`, quietly.
    static func show(_ url: URL, _ context: Context) {
        if context.json {
            context.output("", json: ["status": "open_browser", "url": url.absoluteString])
        } else {
            print("Open this page to sign in (it opens by itself on a desktop):\n  \(url.absoluteString)")
        }
        let environment = ProcessInfo.processInfo.environment
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil,
            let opener = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
                .map({ "\($0)/xdg-open" }).first(where: FileManager.default.isExecutableFile(atPath:))
        else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url.absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
