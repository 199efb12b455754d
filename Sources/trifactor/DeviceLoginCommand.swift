import CommandLineKit
import Foundation
import QRCode
import TrifactorKit
import TrifactorKitVault

/// `trifactor login --device`: Sign in with Trifactor on a machine without a browser (a server over SSH), with the
/// OAuth 2.0 Device Authorization Grant (RFC 8628). The CLI shows a code, its address and a QR code; the user signs
/// in and approves on a phone or laptop; the CLI polls until then, verifies the ID token as `--browser` does, and
/// keeps the tokens in the vault.
enum DeviceLoginCommand {
    /// The options `login` takes for this mode.
    static let valued: Set<String> = ["issuer", "client-id", "scopes"]

    static func run(_ a: Arguments, _ context: Context) async throws {
        try a.atMost(0)
        if a.value("acr") != nil { throw UsageError("--acr goes with --browser: the device grant asks for no level.") }
        guard let issuerText = a.value("issuer") else { throw UsageError("--device needs --issuer URL.") }
        guard let issuer = URL(string: issuerText), let scheme = issuer.scheme, ["http", "https"].contains(scheme),
            issuer.host != nil
        else { throw UsageError("--issuer must be an http:// or https:// URL.") }
        guard let clientID = a.value("client-id"), !clientID.isEmpty else {
            throw UsageError(
                "--device needs --client-id ID (a client registered with --auth-method none and the grant "
                    + "urn:ietf:params:oauth:grant-type:device_code).")
        }
        let scopes = (a.value("scopes") ?? "openid").split(separator: " ").map(String.init)
        let signIn = SignInWithTrifactor(
            deviceOf: issuer, clientID: clientID, scopes: scopes, crypto: OpenSSLTokenCrypto())
        let authorization = try await signIn.deviceAuthorization()
        show(authorization, context)
        let tokens: SignInWithTrifactor.Tokens
        do {
            tokens = try await context.terminal.waiting(
                "Waiting for approval", until: authorization.expiresAt
            ) { try await signIn.tokens(for: authorization) }
        } catch let error as TrifactorError where error.oauthError?.error == "access_denied" {
            throw CLIFailure("The sign-in was denied in the browser.", code: .denied)
        } catch let error as TrifactorError where error.code == .expired {
            throw CLIFailure("The code expired before it was approved: run the command again.", code: .expired)
        }
        try await BrowserLoginCommand.signedIn(tokens, context)
    }

    /// The code, where to type it and a QR code of the address that carries it (on stdout; one JSON line with
    /// `--json`, for a script to show them its own way).
    static func show(_ authorization: SignInWithTrifactor.DeviceAuthorization, _ context: Context) {
        let complete = authorization.verificationURIComplete?.absoluteString
        if context.json {
            var json: [String: Any] = [
                "status": "enter_code", "user_code": authorization.userCode,
                "verification_uri": authorization.verificationURI.absoluteString,
                "expires_at": ISO8601DateFormatter().string(from: authorization.expiresAt),
            ]
            json["verification_uri_complete"] = complete
            context.output("", json: json)
            return
        }
        print("On your phone or computer, open \(authorization.verificationURI.absoluteString)")
        print("and enter the code \(authorization.userCode)")
        if let complete, let qr = try? QRMatrix(encoding: complete) {
            print("\nOr scan this code:\n\(qr.halfBlocks())\n")
        }
    }
}
