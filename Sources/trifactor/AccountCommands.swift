import CommandLineKit
import Foundation
import TrifactorKit

struct SignUpCommand: Command {
    static let name = "signup"
    static let summary = "EMAIL [--name N] [--password-stdin]   create an account; a code goes to EMAIL"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["name", "password"], flags: ["password-stdin"])
        let email = try a.word(0, "the email address")
        try a.atMost(1)
        let password = try context.terminal.secret(
            stdin: a.has("password-stdin"), file: a.value("password"), name: "password", prompt: "New password: ")
        try await context.client.signUp(email: email, password: password, displayName: a.value("name"))
        context.output(
            "Check \(email) for a code, then run `trifactor verify-email \(email)`.",
            json: ["status": "verification_sent"])
    }
}

struct VerifyEmailCommand: Command {
    static let name = "verify-email"
    static let summary = "EMAIL [--code-stdin | --code @FILE] [--resend]   confirm the address with its code"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["code"], flags: ["code-stdin", "resend"])
        let email = try a.word(0, "the email address")
        try a.atMost(1)
        if a.has("resend") {
            try await context.client.resendVerification(to: email)
            context.output("A new code is on its way to \(email).", json: ["status": "verification_sent"])
            return
        }
        let code = try context.terminal.secret(
            stdin: a.has("code-stdin"), file: a.value("code"), name: "code", prompt: "Code from the email: ")
        try await context.client.verifyEmail(email, code: code)
        context.output("\(email) is verified.", json: ["status": "verified"])
    }
}

struct LoginCommand: Command {
    static let name = "login"
    static let summary =
        "EMAIL [--push] [--factor ID] [--password-stdin] [--code-stdin]   sign in (second factor as needed); or "
        + "--browser --issuer URL --client-id ID [--acr LEVEL] [--scopes S]   through the provider's page; or "
        + "--device --issuer URL --client-id ID [--scopes S]   with a code typed in a browser elsewhere"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(
            raw, valued: Set(["factor", "password", "code"]).union(BrowserLoginCommand.valued),
            flags: ["push", "password-stdin", "code-stdin", "browser", "device"])
        if a.has("browser") && a.has("device") { throw UsageError("--browser and --device exclude each other.") }
        if a.has("browser") { return try await BrowserLoginCommand.run(a, context) }
        if a.has("device") { return try await DeviceLoginCommand.run(a, context) }
        if let option = BrowserLoginCommand.valued.sorted().first(where: { a.value($0) != nil }) {
            throw UsageError("--\(option) goes with --browser or --device.")
        }
        let email = try a.word(0, "the email address")
        try a.atMost(1)
        let client = context.client
        if a.has("push") {
            let push = try await client.signInWithPush(email: email)
            announce(push.number, context)
            let session = try await context.terminal.waiting(
                "Waiting for your device", until: Date().addingTimeInterval(120)
            ) { try await push.session() }
            return signedIn(session, email, context)
        }
        let password = try context.terminal.secret(
            stdin: a.has("password-stdin"), file: a.value("password"), name: "password", prompt: "Password: ")
        switch try await client.signIn(email: email, password: password) {
        case .signedIn(let session):
            signedIn(session, email, context)
        case .secondFactorRequired(let resolver):
            let hint = try pick(resolver.hints, wanted: a.value("factor"), context)
            let challenge = try await resolver.challenge(hint)
            let proof = try await FactorPrompt.proof(
                for: challenge, hint: hint, codeStdin: a.has("code-stdin"), codeFile: a.value("code"),
                deadline: resolver.expiresAt, context)
            signedIn(try await resolver.resolve(hint, with: proof), email, context)
        }
    }

    static func announce(_ number: Int, _ context: Context) {
        if context.json {
            context.output("", json: ["status": "waiting_for_device", "number": number])
        } else {
            print("Pick \(number) on your device.")
        }
    }

    static func signedIn(_ session: SessionInfo, _ email: String, _ context: Context) {
        context.output(
            "Signed in as \(email) (AAL\(session.aal), \(session.methods.joined(separator: "+"))).",
            json: ["status": "signed_in", "session_id": session.id, "aal": session.aal, "methods": session.methods])
    }

    /// The factor to use: `--factor ID`, the only one, or the user's pick.
    static func pick(_ hints: [FactorHint], wanted: String?, _ context: Context) throws -> FactorHint {
        if let wanted {
            guard let hint = hints.first(where: { $0.id == wanted }) else {
                throw UsageError("No factor \(wanted); the factors are: \(hints.map(\.id).joined(separator: ", ")).")
            }
            return hint
        }
        if hints.count == 1 || context.terminal.noInput { return hints[0] }
        print("Second factor:")
        for (index, hint) in hints.enumerated() { print("  \(index + 1). \(FactorPrompt.label(hint))") }
        let answer: String
        do { answer = try context.terminal.ask("Use [1]: ") } catch { throw TrifactorError.presence(error) }
        guard let n = Int(answer.isEmpty ? "1" : answer), hints.indices.contains(n - 1) else {
            throw UsageError("Pick a number from the list.")
        }
        return hints[n - 1]
    }
}

/// Asking the user for a factor's proof, shared by login, step-up and authorize.
enum FactorPrompt {
    static func label(_ hint: FactorHint) -> String {
        let name = hint.displayName.map { " \"\($0)\"" } ?? ""
        switch hint.kind {
        case .phone(let masked): return "phone \(masked)\(name)"
        case .totp: return "authenticator app\(name)"
        case .recoveryCode: return "a recovery code"
        case .device: return "device\(name) (approve there)"
        case .passkey: return "passkey\(name) (needs a browser)"
        case .other(let kind): return kind
        }
    }

    /// - Parameter purpose: what a device key signs the challenge for (`stepup`, `signin`, `reset`).
    static func proof(
        for challenge: SecondFactorChallenge, hint: FactorHint, codeStdin: Bool, codeFile: String?, deadline: Date?,
        purpose: String = "stepup", _ context: Context
    ) async throws -> SecondFactorProof {
        func code(_ prompt: String) throws -> SecondFactorProof {
            .code(try context.terminal.secret(stdin: codeStdin, file: codeFile, name: "code", prompt: prompt))
        }
        switch challenge {
        case .push(let push):
            LoginCommand.announce(push.number, context)
            try await context.terminal.waiting("Waiting for your device", until: deadline) {
                try await push.waitForApproval()
            }
            return .approval(push)
        case .codeSent(let masked): return try code("Code sent to \(masked): ")
        case .enterCode:
            if case .recoveryCode = hint.kind { return try code("Recovery code: ") }
            if let local = try? await TOTPCommand.localCode(for: hint, context) { return .code(local) }
            return try code("Code from your authenticator app: ")
        case .deviceChallenge(let challenge):
            return .deviceSignature(
                try await context.device.signature(purpose: purpose, challenge: challenge, reason: "Confirm it is you"))
        case .passkey:
            throw CLIFailure("A passkey needs a browser; pick another factor with --factor.")
        }
    }
}

struct WhoAmICommand: Command {
    static let name = "whoami"
    static let summary = "the signed-in user and session"

    static func run(_ raw: [String], _ context: Context) async throws {
        try Arguments(raw).atMost(0)
        let current = try await context.client.currentSession()
        context.output(
            """
            \(current.user.email)\(current.user.emailVerified ? "" : " (email not verified)")
            session \(current.session.id): AAL\(current.session.aal), \(current.session.methods.joined(separator: "+")), until \(WireJSON.format(current.session.expiresAt))
            """,
            json: [
                "email": current.user.email, "user_id": current.user.id, "email_verified": current.user.emailVerified,
                "session_id": current.session.id, "aal": current.session.aal, "methods": current.session.methods,
                "expires_at": WireJSON.format(current.session.expiresAt),
            ])
    }
}

struct LogoutCommand: Command {
    static let name = "logout"
    static let summary = "end this session"

    static func run(_ raw: [String], _ context: Context) async throws {
        try Arguments(raw).atMost(0)
        try await context.client.signOut()
        context.output("Signed out.", json: ["status": "signed_out"])
    }
}

struct SessionsCommand: Command {
    static let name = "sessions"
    static let summary = "[--revoke ID]   the account's live sessions; end one"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["revoke"])
        try a.atMost(0)
        if let id = a.value("revoke") {
            try await context.client.revokeSession(id)
            context.output("Session \(id) ended.", json: ["status": "revoked", "session_id": id])
            return
        }
        let sessions = try await context.client.sessions()
        context.output(
            sessions.map { s in
                "\(s.current ? "*" : " ") \(s.id)  AAL\(s.aal) \(s.methods.joined(separator: "+"))  \(s.ip ?? "-")  \(s.userAgent ?? "-")  seen \(WireJSON.format(s.lastSeenAt))"
            }.joined(separator: "\n"),
            json: sessions.map {
                [
                    "id": $0.id, "aal": $0.aal, "current": $0.current, "ip": $0.ip ?? NSNull(),
                    "user_agent": $0.userAgent ?? NSNull(),
                ] as [String: Any]
            })
    }
}

struct StepUpCommand: Command {
    static let name = "step-up"
    static let summary = "[--factor ID] [--code-stdin]   prove a second factor on this session (AAL2)"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["factor", "code"], flags: ["code-stdin"])
        try a.atMost(0)
        let client = context.client
        let hints = try await client.factors().map(FactorHint.init).filter { $0.kind != .recoveryCode }
        guard !hints.isEmpty else {
            throw CLIFailure("The account has no second factor: add one with `trifactor factors add`.")
        }
        let hint = try LoginCommand.pick(hints, wanted: a.value("factor"), context)
        let challenge = try await client.stepUpChallenge(hint)
        if case .push = challenge {
            throw CLIFailure("A step-up with a device signs on this machine: run `trifactor device init` here.")
        }
        let proof = try await FactorPrompt.proof(
            for: challenge, hint: hint, codeStdin: a.has("code-stdin"), codeFile: a.value("code"), deadline: nil,
            context)
        let raised = try await client.stepUp(hint, with: proof)
        context.output(
            "Stepped up: AAL\(raised.session.aal).", json: ["status": "stepped_up", "aal": raised.session.aal])
    }
}

struct AuthorizeCommand: Command {
    static let name = "authorize"
    static let summary =
        "transfer --amount A --currency C --payee P --from ACCOUNT [--factor ID] [--code-stdin]   approve a bound action"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(
            raw, valued: ["amount", "currency", "payee", "from", "factor", "code"], flags: ["code-stdin"])
        guard try a.word(0, "the action (transfer)") == "transfer" else {
            throw UsageError("The only action is transfer.")
        }
        try a.atMost(1)
        guard let amount = a.value("amount"),
            amount.range(of: #"^\d{1,12}(\.\d{1,2})?$"#, options: .regularExpression) != nil
        else {
            throw UsageError("--amount is a positive decimal like 250.00.")
        }
        guard let currency = a.value("currency"), currency.range(of: "^[A-Z]{3}$", options: .regularExpression) != nil
        else {
            throw UsageError("--currency is an ISO 4217 code like EUR.")
        }
        guard let payee = a.value("payee"), !payee.isEmpty, let from = a.value("from"), !from.isEmpty else {
            throw UsageError("Name --payee and --from.")
        }
        let client = context.client
        let hints = try await client.factors().map(FactorHint.init).filter { $0.kind != .recoveryCode }
        guard !hints.isEmpty else { throw CLIFailure("The account has no second factor.") }
        let hint = try LoginCommand.pick(hints, wanted: a.value("factor"), context)
        let pending = try await client.authorize(
            .transfer(amount: amount, currency: currency, payee: payee, from: from), with: hint)
        if !context.json { print(pending.summary) }
        let proof: SecondFactorProof
        if case .deviceChallenge(let challenge) = pending.challenge {
            proof = .deviceSignature(
                try await context.device.signature(
                    purpose: "authz", challenge: challenge, action: pending.actionHash,
                    reason: pending.summary))
        } else {
            proof = try await FactorPrompt.proof(
                for: pending.challenge, hint: hint, codeStdin: a.has("code-stdin"), codeFile: a.value("code"),
                deadline: nil, context)
        }
        try await pending.approve(with: proof)
        context.output(
            "Approved: \(pending.summary) (authorization \(pending.id)).",
            json: ["status": "approved", "authorization_id": pending.id, "summary": pending.summary])
    }
}
