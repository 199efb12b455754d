import CommandLineKit
import Crypto
import Foundation
import QRCode
import TrifactorKit

struct FactorsCommand: Command {
    static let name = "factors"
    static let summary =
        "list | add phone NUMBER [--country CC] | add totp [--keep] [--name N] | add device [--name N] | remove ID | recovery-codes"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["country", "name", "code"], flags: ["keep", "code-stdin"])
        let client = context.client
        switch a.words.first ?? "list" {
        case "list":
            try a.atMost(1)
            let factors = try await client.factors()
            context.output(
                factors.isEmpty
                    ? "No second factors yet: `trifactor factors add totp --keep` is the quickest."
                    : factors.map {
                        "\($0.enrollmentID)  \($0.kind)  \($0.displayName)\($0.maskedPhone.map { "  \($0)" } ?? "")\(approvals($0))"
                    }
                    .joined(separator: "\n"),
                json: factors.map {
                    [
                        "id": $0.enrollmentID, "kind": $0.kind, "name": $0.displayName,
                        "masked_phone": $0.maskedPhone ?? NSNull(),
                        "approval_bound": $0.approvalBound ?? NSNull(), "approval_gate": $0.approvalGate ?? NSNull(),
                    ] as [String: Any]
                })
        case "add":
            try a.atMost(3)
            switch try a.word(1, "what to add: phone, totp or device") {
            case "phone":
                let pending = try await client.enrollPhone(
                    try a.word(2, "the phone number"), country: a.value("country"))
                let code = try context.terminal.secret(
                    stdin: a.has("code-stdin"), file: a.value("code"), name: "code",
                    prompt: "Code sent to \(pending.maskedPhone ?? "the phone"): ")
                let factor = try await pending.confirm(code: code, name: a.value("name"))
                context.output(
                    "Added phone \(factor.maskedPhone ?? "") (\(factor.enrollmentID)).",
                    json: ["id": factor.enrollmentID, "kind": factor.kind])
            case "totp":
                try a.atMost(2)
                let pending = try await client.enrollTOTP()
                guard let secret = pending.secret, let uri = pending.otpauthURI else {
                    throw TrifactorError.unexpectedResponse(status: 202)
                }
                let code: String
                if a.has("keep") {
                    guard let local = TOTPEntry(uri: uri) else {
                        throw CLIFailure("The server's otpauth URI cannot be read.")
                    }
                    code = local.code(at: Date())
                } else {
                    if !context.json {
                        print((try? QRMatrix(encoding: uri).halfBlocks()) ?? uri, "\nOr type this secret: \(secret)\n")
                    }
                    code = try context.terminal.secret(
                        stdin: a.has("code-stdin"), file: a.value("code"), name: "code",
                        prompt: "Code from your authenticator app: ")
                }
                let factor = try await pending.confirm(
                    code: code, name: a.value("name") ?? (a.has("keep") ? "trifactor CLI" : "Authenticator app"))
                if a.has("keep"), var entry = TOTPEntry(uri: uri) {
                    entry.factorID = factor.enrollmentID
                    try await TOTPCommand.store(entry, name: "trifactor-\(factor.enrollmentID.prefix(8))", context)
                }
                context.output(
                    "Added authenticator app \(factor.enrollmentID)\(a.has("keep") ? "; this CLI keeps its secret and is the app" : "").",
                    json: ["id": factor.enrollmentID, "kind": factor.kind, "kept": a.has("keep")])
            case "device":
                try a.atMost(2)
                let factor = try await context.device.enroll(
                    with: client, name: a.value("name") ?? "trifactor on \(ProcessInfo.processInfo.hostName)")
                context.output(
                    "This machine is now device \(factor.enrollmentID): run `trifactor approve --watch` to answer sign-ins.",
                    json: ["id": factor.enrollmentID, "kind": factor.kind])
            case let other: throw UsageError("Cannot add \"\(other)\": phone, totp or device.")
            }
        case "remove":
            try a.atMost(2)
            let id = try a.word(1, "the factor's id")
            try await client.removeFactor(id)
            context.output("Removed \(id).", json: ["status": "removed", "id": id])
        case "recovery-codes":
            try a.atMost(1)
            let codes = try await client.newRecoveryCodes()
            context.output(
                "Keep these somewhere safe; each works once, and the old set no longer does:\n"
                    + codes.joined(separator: "\n"),
                json: ["codes": codes])
        case let other: throw UsageError("Unknown `factors \(other)`: list, add, remove or recovery-codes.")
        }
    }
}

/// What releases a device's approvals, for `factors list`.
func approvals(_ factor: EnrolledFactor) -> String {
    guard factor.kind == "device" else { return "" }
    switch factor.approvalGate {
    case "biometry": return "  approvals need Face ID or Touch ID"
    case "biometry_or_passcode": return "  approvals need Face ID, Touch ID or the passcode"
    case "passphrase": return "  approvals need the vault passphrase"
    default:
        return
            "  approvals not bound to a key (enrolled by an older app: to bind them, `factors remove` it, `device forget`, then `device init`)"
    }
}

struct DeviceCommand: Command {
    static let name = "device"
    static let summary = "init [--name N] | show | forget   this machine as a device factor"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, valued: ["name"])
        try a.atMost(1)
        let device = context.device
        switch try a.word(0, "init, show or forget") {
        case "init":
            let factor = try await device.enroll(
                with: context.client, name: a.value("name") ?? "trifactor on \(ProcessInfo.processInfo.hostName)")
            let fingerprint = try await fingerprint(device)
            context.output(
                "This machine is device \(factor.enrollmentID), key \(fingerprint).",
                json: ["id": factor.enrollmentID, "fingerprint": fingerprint])
        case "show":
            guard let id = try await device.factorID() else {
                throw CLIFailure("This machine is not a device yet: run `trifactor device init`.")
            }
            let fingerprint = try await fingerprint(device)
            let bound = try await device.isApprovalBound()
            context.output(
                "device \(id)\nkey SHA256:\(fingerprint)\napprovals \(bound ? "signed by a second key released by the vault passphrase" : "not bound to a key")",
                json: ["id": id, "fingerprint": fingerprint, "approval_bound": bound])
        case "forget":
            try await device.forget()
            context.output(
                "The device key is deleted. Remove the factor too: `trifactor factors remove ID`.",
                json: ["status": "forgotten"])
        case let other: throw UsageError("Unknown `device \(other)`: init, show or forget.")
        }
    }

    static func fingerprint(_ device: DeviceAuthenticator) async throws -> String {
        guard let key = try await device.publicKey() else { throw CLIFailure("This machine has no device key.") }
        return Data(SHA256.hash(Array(key))).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }
}

struct ApproveCommand: Command {
    static let name = "approve"
    static let summary =
        "[--watch] [--once]   answer sign-ins and payments waiting for this device: type the number shown on the screen that asks"

    static func run(_ raw: [String], _ context: Context) async throws {
        let a = try Arguments(raw, flags: ["watch", "once"])
        try a.atMost(0)
        let device = context.device
        guard try await device.factorID() != nil else {
            throw CLIFailure("This machine is not a device yet: run `trifactor device init`.")
        }
        if a.has("watch") || a.has("once") {
            if !context.json && context.terminal.stdoutIsTerminal {
                print("Waiting for sign-ins and payments (Ctrl-C to stop)…")
            }
            for try await approval in device.approvals() {
                do {
                    try await answer(approval, device, context)
                } catch let late as CLIFailure where late.code == .expired && !a.has("once") {
                    // One request that ended before its answer does not end the watch.
                    print(late.sentence)
                    continue
                }
                if a.has("once") { return }
            }
            return
        }
        let pending = try await context.terminal.waiting(
            "Waiting for a sign-in or payment", until: Date().addingTimeInterval(25)
        ) {
            try await device.pendingApprovals(wait: 25)
        }
        guard !pending.isEmpty else {
            context.output("Nothing is waiting for this device.", json: ["approvals": [Any]()])
            return
        }
        for approval in pending { try await answer(approval, device, context) }
    }

    /// Shows where the sign-in comes from and asks for the number; Enter (no number) denies.
    static func answer(_ approval: PendingApproval, _ device: DeviceAuthenticator, _ context: Context) async throws {
        let left = max(0, Int(approval.expiresAt.timeIntervalSinceNow.rounded()))
        let fromApp = approval.purpose == "ciba"
        // A payment is shown from the details the device signs the hash of, checked against it first. One that does
        // not match is never shown as if it were the payment: it is denied, and the next one is answered.
        let payment: [String: JSONScalar]?
        do {
            payment = try device.payment(of: approval)
        } catch {
            // Denied (or already gone: then there is nothing left to deny).
            _ = try? await device.answer(approval, pickedNumber: nil)
            context.output(
                "A payment request did not match its own details, so it was denied: \(error)",
                json: ["approval_id": approval.approvalID, "status": "denied", "reason": "action_mismatch"])
            return
        }
        if !context.json {
            if let payment {
                print("\(paymentAsker(approval.message)) asks you to approve a payment, \(left) s left:")
                print(paymentLines(payment).map { "  \($0)" }.joined(separator: "\n"))
            } else if fromApp {
                // OpenID CIBA: an app asks on the user's behalf; its message says what for.
                print("\(approval.message ?? "An app") asks for your approval, \(left) s left.")
            } else {
                let what = approval.purpose == "reset" ? "Password reset" : "Sign-in"
                print(
                    "\(what) from \(approval.ip ?? "an unknown address") with \(approval.userAgent ?? "an unknown browser"), \(left) s left."
                )
            }
        }
        var number: Int?
        while true {
            let typed: String
            do {
                typed = try context.terminal.ask(
                    payment != nil
                        ? "Type the number shown on the payment screen (Enter denies): "
                        : fromApp
                            ? "Type the number the app gave you (Enter denies): "
                            : "Type the number shown on the sign-in screen (Enter denies): ")
            } catch {
                throw TrifactorError.presence(error)
            }
            let trimmed = typed.trimmingCharacters(in: .whitespaces)
            number = Int(trimmed)
            // Only Enter denies: a typo that is not a number is asked again, never taken as a "no".
            if trimmed.isEmpty || number != nil { break }
            print("That is not a number. Type the two digits, or press Enter to deny.")
        }
        let state: PushApproval.State
        do {
            state = try await device.answer(approval, pickedNumber: number)
        } catch {
            guard error.isProblem(.authorizationNotFound) else { throw error }
            // Answered too late: cancelled where it was asked, answered elsewhere, or expired meanwhile.
            throw CLIFailure(
                "This request is no longer waiting: it was cancelled, answered elsewhere, or it expired. Nothing was approved.",
                code: .expired)
        }
        switch state {
        case .approved: context.output("Approved.", json: ["approval_id": approval.approvalID, "status": "approved"])
        default:
            context.output(
                number == nil
                    ? "Denied."
                    : payment != nil
                        ? "Denied: that number was not on the payment screen, so that approval is over."
                        : fromApp
                            ? "Denied: that was not the app's number, so its request is over."
                            : "Denied: that number was not on the sign-in screen, so that sign-in is over.",
                json: ["approval_id": approval.approvalID, "status": "denied"])
        }
    }
}

/// Who asks for a payment: the app's name from the approval's message ("Trifactor Bank: …"), or "An app".
func paymentAsker(_ message: String?) -> String {
    guard let message, let colon = message.firstIndex(of: ":"), colon > message.startIndex else { return "An app" }
    return String(message[..<colon])
}

/// An IBAN in groups of four, as printed on statements.
func groupedIBAN(_ iban: String) -> String {
    let compact = Array(iban.filter { !$0.isWhitespace })
    return stride(from: 0, to: compact.count, by: 4).map { String(compact[$0..<min($0 + 4, compact.count)]) }
        .joined(separator: " ")
}

/// A transfer's lines as the device shows them: amount, payee, account (IBAN in groups of four).
func paymentLines(_ action: [String: JSONScalar]) -> [String] {
    guard let amount = action["amount"]?.text, let payee = action["payee"]?.text else {
        return ["\(action["type"]?.text ?? "An action") (details on the screen that asks)"]
    }
    var lines = ["Amount: \(action["currency"].map { "\($0.text) " } ?? "")\(amount)", "To:     \(payee)"]
    if let iban = action["to"]?.text { lines.append("IBAN:   \(groupedIBAN(iban))") }
    if let from = action["from"]?.text { lines.append("From:   \(groupedIBAN(from))") }
    if let reference = action["reference"]?.text { lines.append("Ref:    \(reference)") }
    return lines
}

struct DenyCommand: Command {
    static let name = "deny"
    static let summary = "deny every sign-in, payment and request waiting for this device"

    static func run(_ raw: [String], _ context: Context) async throws {
        try Arguments(raw).atMost(0)
        let device = context.device
        let pending = try await device.pendingApprovals()
        for approval in pending { _ = try await device.answer(approval, pickedNumber: nil) }
        context.output(
            pending.isEmpty
                ? "Nothing is waiting for this device."
                : "Denied \(pending.count) request\(pending.count == 1 ? "" : "s").",
            json: ["denied": pending.map(\.approvalID)])
    }
}
