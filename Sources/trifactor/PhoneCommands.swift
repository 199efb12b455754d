import CommandLineKit
import Foundation
import TrifactorKit
import TrifactorKitVault

struct PhoneCommand: Command {
    static let name = "phone"
    static let summary =
        "verify --to N [--channel sms,voice] [--brand B] | check ID | next ID | cancel ID   phone verification (API key)"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(
            raw, valued: ["to", "channel", "brand", "code-length", "key-file", "code"], flags: ["code-stdin"])
        let client = try verificationClient(a.value("key-file"), context)
        switch try a.word(0, "verify, check, next or cancel") {
        case "verify":
            try a.atMost(1)
            guard let to = a.value("to"), to.range(of: #"^\+?[1-9]\d{6,14}$"#, options: .regularExpression) != nil
            else {
                throw UsageError("--to is a phone number in international form, like +447400123456.")
            }
            var channels: [PhoneVerificationClient.Channel] = []
            for word in (a.value("channel") ?? "sms,voice").split(separator: ",") {
                guard let channel = PhoneVerificationClient.Channel(rawValue: String(word)) else {
                    throw UsageError("A channel is sms or voice.")
                }
                channels.append(channel)
            }
            let length = try a.value("code-length").map { (text: String) throws(UsageError) -> Int in
                guard let n = Int(text), (4...10).contains(n) else { throw UsageError("--code-length is 4 to 10.") }
                return n
            }
            let id = try await client.start(
                to: to, channels: channels, brand: a.value("brand") ?? "Trifactor", codeLength: length)
            context.output("Started \(id): `trifactor phone check \(id)` with the code.", json: ["request_id": id])
        case "check":
            try a.atMost(2)
            let id = try a.word(1, "the request id")
            let code = try context.terminal.secret(
                stdin: a.has("code-stdin"), file: a.value("code"), name: "code", prompt: "Code: ")
            switch try await client.check(id, code: code) {
            case .verified: context.output("Verified.", json: ["request_id": id, "status": "completed"])
            case .wrongCode(let left):
                throw CLIFailure(
                    "That code is wrong\(left.map { "; \($0) more tr\($0 == 1 ? "y" : "ies") before the verification ends" } ?? "; try again").",
                    code: .denied)
            case .ended:
                throw CLIFailure(
                    "This verification is over (verified, expired or too many wrong codes): start again.",
                    code: .expired)
            }
        case "next":
            try a.atMost(2)
            let id = try a.word(1, "the request id")
            try await client.next(id)
            context.output("The next channel is on its way.", json: ["request_id": id, "status": "next"])
        case "cancel":
            try a.atMost(2)
            let id = try a.word(1, "the request id")
            try await client.cancel(id)
            context.output("Cancelled.", json: ["request_id": id, "status": "cancelled"])
        case let other: throw UsageError("Unknown `phone \(other)`: verify, check, next or cancel.")
        }
    }

    /// The API key from `--key-file` (the JSON of `trifactord keys create --json`, mode 0600) or
    /// `TRIFACTOR_API_KEY` and `TRIFACTOR_API_SECRET`.
    static func verificationClient(_ keyFile: String?, _ context: Context) throws -> PhoneVerificationClient {
        let environment = ProcessInfo.processInfo.environment
        if let path = keyFile ?? environment["TRIFACTOR_API_KEY_FILE"] {
            var info = stat()
            guard stat(path, &info) == 0 else { throw UsageError("\(path) does not exist.") }
            guard info.st_mode & 0o077 == 0 else {
                throw CLIFailure("\(path) can be read by other users; run `chmod 600 \(path)` first.")
            }
            guard let data = FileManager.default.contents(atPath: path),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let key = object["api_key"] as? String, let secret = object["api_secret"] as? String
            else { throw CLIFailure("\(path) does not hold {\"api_key\", \"api_secret\"}.") }
            return PhoneVerificationClient(server: context.server, apiKey: key, apiSecret: secret)
        }
        guard let key = environment["TRIFACTOR_API_KEY"], let secret = environment["TRIFACTOR_API_SECRET"],
            !key.isEmpty, !secret.isEmpty
        else {
            throw UsageError("Give an API key: --key-file FILE, or TRIFACTOR_API_KEY and TRIFACTOR_API_SECRET.")
        }
        return PhoneVerificationClient(server: context.server, apiKey: key, apiSecret: secret)
    }
}

struct DoctorCommand: Command {
    static let name = "doctor"
    static let summary = "check the server, the clock skew and the vault's permissions"

    static func run(_ raw: [String], _ context: Context) async throws {
        try Arguments(raw).atMost(0)
        var checks: [[String: Any]] = []
        var healthy = true
        func report(_ name: String, _ ok: Bool, _ detail: String) {
            healthy = healthy && ok
            checks.append(["check": name, "ok": ok, "detail": detail])
            if !context.json { print("\(ok ? "ok  " : "FAIL") \(name): \(detail)") }
        }
        let transport = URLSessionTransport()
        let started = Date()
        do {
            let response = try await transport.send(
                HTTPRequest(method: "GET", url: context.server.appendingPathComponent("health"), timeout: 10))
            let finished = Date()
            let health = try? WireJSON.sharedDecoder.decode(HealthStatus.self, from: response.body)
            report(
                "server", response.status == 200,
                "\(context.server.absoluteString) answers \(response.status), version \(health?.version ?? "unknown")")
            if let date = response.header("date").flatMap(DeviceAuthenticator.httpDate) {
                let skew = date.timeIntervalSince(started.addingTimeInterval(finished.timeIntervalSince(started) / 2))
                report(
                    "clock", abs(skew) < 15,
                    String(format: "%+.0f s against the server (device signatures allow 30 s)", skew))
            } else {
                report("clock", false, "the server sent no Date header")
            }
        } catch {
            report("server", false, "\(context.server.absoluteString): \(CLI.describe(error).0)")
        }
        do {
            let names = try context.vault.names()
            report(
                "vault", true,
                context.vault.exists
                    ? "\(context.vault.url.path) is private, \(names.count) items"
                    : "not created yet (\(context.vault.url.path))")
        } catch {
            report("vault", false, CLI.describe(error).0)
        }
        if context.json { context.output("", json: ["healthy": healthy, "checks": checks]) }
        if !healthy { throw CLIFailure("Some checks failed.") }
    }
}
