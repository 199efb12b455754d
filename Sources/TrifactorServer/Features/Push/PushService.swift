import API
import Core
import Crypto
import Foundation
import HTTP
import Store
import Synchronization

/// Sign-in approved on the phone, with number matching. The browser's
/// sign-in shows a two-digit number; the enrolled device, polling for its
/// pending approvals (a long poll: no server thread waits), shows where the
/// sign-in comes from and three numbers, and answers with a signed decision.
/// A wrong number denies the sign-in and is audited as a possible fatigue
/// attack. Approvals live 2 minutes; at most 3 pushes per user per 10 minutes.
struct PushService: Sendable {
    static let lifetime: Int64 = 2 * 60_000
    static let maxPerWindow = 3
    static let window: Int64 = 10 * 60_000
    /// How far a device's clock may be from ours.
    static let clockSkew: Int64 = 30

    /// A push that was sent.
    struct Created: Sendable {
        let id: ApprovalID
        let number: Int
    }

    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let changes: ChangeFeed
    /// What other features do, in the decision's transaction, when a device decides (the OpenID Provider pings a
    /// CIBA client).
    var decided = PushDecisionHooks()

    /// The number to match and three choices holding it, shuffled.
    func numbers() -> (number: Int, choices: [Int]) {
        let number = 10 + Int(random.uniform(90))
        var choices = [number]
        while choices.count < 3 {
            let other = 10 + Int(random.uniform(90))
            if !choices.contains(other) { choices.append(other) }
        }
        for i in stride(from: 2, to: 0, by: -1) { choices.swapAt(i, Int(random.uniform(UInt32(i + 1)))) }
        return (number, choices)
    }

    /// Pushes a sign-in of `factor`'s user to that device (or a payment: `action`, the bound action the device shows
    /// and signs the hash of, and `message`, who asks).
    /// - Returns: nil when the user had 3 pushes in the last 10 minutes (then only the device signature path is offered).
    func create(
        for factor: Factor, purpose: Purpose, message: String? = nil, action: [String: JSONScalar]? = nil,
        client: AuditContext, now: Date
    ) throws -> Created? {
        let (number, choices) = numbers()
        let id = ApprovalID.random(using: random)
        let created = try transactions.write { db -> Bool in
            try AccountRepository.lock(factor.userID, on: db)
            let recent = try PushRepository.count(
                userID: factor.userID, since: now.millis - Self.window, budget: .init(purpose), on: db)
            guard recent < Self.maxPerWindow else {
                try AuditLog.append(
                    client.event(
                        .pushDenied, .denied, userID: factor.userID, detail: "push limit reached: 3 per 10 minutes"),
                    at: now.millis, on: db)
                return false
            }
            try PushRepository.insert(
                id: id, userID: factor.userID, factorID: factor.id, emailKey: nil, purpose: purpose, number: number,
                choices: choices, message: message, action: action, client: client, now: now.millis, on: db)
            try AuditLog.append(
                client.event(
                    .pushSent, .success, userID: factor.userID, detail: "approval=\(id.raw) device=\(factor.id.raw)"),
                at: now.millis, on: db)
            return true
        }
        guard created else { return nil }
        changes.publish("device:\(factor.id.raw)")
        return Created(id: id, number: number)
    }

    /// Spends an approved approval of `factor` for `purpose`, in the caller's transaction; false otherwise.
    func consume(_ id: ApprovalID, factor: Factor, purpose: Purpose, now: Int64, on db: any SQLConnection) throws
        -> Bool
    {
        try PushRepository.consume(id, factorID: factor.id, purpose: purpose, now: now, on: db)
    }

    // MARK: The device's side

    /// The device `id`, authenticated by its signature over `poll`, its id and
    /// a time within 30 seconds of ours.
    /// - Throws: `CommonFailure.unauthenticated`.
    func device(_ id: FactorID, time: String?, signature: String?) throws -> Factor {
        let now = clock.now().millis / 1000
        guard let time = time.flatMap(Int64.init), (0...4_102_444_800).contains(time),
            abs(time - now) <= Self.clockSkew, let signature,
            let factor = try transactions.read({ try FactorRepository.device(id, on: $0) }),
            case .device(let keys) = factor.credential,
            // The signing key only: the approval key prompts, and a poll never asks the user.
            DeviceKeyFactor.isValid(
                signature: signature, key: keys.signing,
                message: DeviceKeyFactor.message(purpose: "poll", challenge: "\(id.raw):\(time)", action: nil))
        else { throw CommonFailure.unauthenticated }
        return factor
    }

    /// The approvals waiting for `device`, oldest first.
    func pending(for device: Factor) throws -> [PendingApproval] {
        let now = clock.now().millis
        return try transactions.read { try PushRepository.waiting(for: device.id, now: now, on: $0) }.map {
            PendingApproval(
                approvalID: $0.id, ip: $0.ip, userAgent: $0.userAgent, createdAt: Date(millis: $0.createdAt),
                expiresAt: Date(millis: $0.expiresAt), choices: $0.choices, purpose: $0.purpose.label,
                message: $0.message, action: $0.action, actionHash: $0.purpose.actionHash)
        }
    }

    /// A device's decision: `approve` with the number it picked, or `deny`,
    /// signed over the approval id, the decision and the number (and, for a
    /// payment, the hash of the action it showed). Approving with a wrong
    /// number ends the whole sign-in (or the payment's approval).
    /// - Throws: `CommonFailure.unauthenticated` for a bad signature,
    ///   `.invalidFields` for another decision, `PushFailure.notFound`.
    func decide(
        _ id: ApprovalID, by device: Factor, decision: String, number: Int, signature: String, client: AuditContext
    ) throws -> ApprovalStatus {
        guard decision == "approve" || decision == "deny" else {
            throw CommonFailure.invalid("decision", "must be approve or deny")
        }
        let now = clock.now().millis
        // A payment's decision signs the hash of the action the device showed: a device shown another payment signs
        // another hash, which approves nothing (dynamic linking, PSD2 RTS Art. 5). The purpose is read whatever the
        // approval's state (it never changes), so an honest late answer is "not found", never a bad signature.
        let bound = try transactions.read {
            try PushRepository.purpose(id, factorID: device.id, on: $0).flatMap { try Purpose(stored: $0).actionHash }
        }
        func signed(_ action: String) -> [UInt8] {
            DeviceKeyFactor.message(purpose: "push", challenge: id.raw, action: action)
        }
        let plain = signed("\(decision):\(number)")
        let hashed = bound.map { signed("\(decision):\(number):\($0)") }
        // An approval only by the approval key when the device has one, over the hash when there is one; a denial asks
        // nothing of the user, so either key may sign it, with or without the hash (a device that cannot hash can
        // still say no).
        guard case .device(let keys) = device.credential,
            DeviceKeyFactor.isValid(signature: signature, key: keys.approving, message: hashed ?? plain)
                || (decision == "deny"
                    && [keys.approving, keys.signing].contains { key in
                        ([plain] + (hashed.map { [$0] } ?? [])).contains {
                            DeviceKeyFactor.isValid(signature: signature, key: key, message: $0)
                        }
                    })
        else {
            try transactions.write {
                try AuditLog.append(
                    client.event(
                        .pushDenied, .failure, userID: device.userID,
                        detail: "approval=\(id.raw) decision with a bad signature refused"),
                    at: now, on: $0)
            }
            throw CommonFailure.unauthenticated
        }
        let status = try transactions.write { db -> ApprovalStatus in
            guard let pending = try PushRepository.pending(id, factorID: device.id, now: now, on: db) else {
                throw PushFailure.notFound
            }
            let right = Int(pending.number) == number
            let status: ApprovalStatus = decision == "approve" && right ? .approved : .denied
            guard try PushRepository.decide(id, status, at: now, on: db) else { throw PushFailure.notFound }
            if decision == "approve" && !right {
                // The whole sign-in ends: its pending credential and any other push for it.
                let purpose = try Purpose(stored: pending.purpose)
                switch purpose {
                case .signIn(let pendingHash):
                    try PendingSignInRepository.endPending(tokenHash: pendingHash, now: now, on: db)
                case .passwordReset(let resetHash):
                    // A pushed reset is ended the same way: whoever holds the mailbox cannot keep pushing it.
                    _ = try PasswordResetCodes.spend(hash: resetHash, now: now, on: db)
                case .authorization(let authorization, _):
                    // The payment's approval ends: a new one starts from the payment page.
                    _ = try AuthorizationRepository.void(authorization, whileIn: .pending, on: db)
                case .stepUp, .backchannel:
                    break
                }
                try PushRepository.denyPending(for: purpose, now: now, on: db)
                try AuditLog.append(
                    client.event(
                        .pushWrongNumber, .denied, userID: device.userID,
                        detail:
                            "approval=\(id.raw) wrong number picked: possible push fatigue attack; \(purpose.label) ended"
                    ),
                    at: now, on: db)
            } else {
                let purpose = try Purpose(stored: pending.purpose)
                if status == .denied, case .authorization(let authorization, _) = purpose {
                    // The user declined the payment on the device: its approval ends, and any other push for it.
                    _ = try AuthorizationRepository.void(authorization, whileIn: .pending, on: db)
                    try PushRepository.denyPending(for: purpose, now: now, on: db)
                }
                try AuditLog.append(
                    client.event(
                        status == .approved ? .pushApproved : .pushDenied, status == .approved ? .success : .denied,
                        userID: device.userID,
                        detail:
                            "approval=\(id.raw)\(status == .approved ? " " + SecondFactorService.boundDetail(device) : "")"
                    ),
                    at: now, on: db)
            }
            try decided.run(try Purpose(stored: pending.purpose), status, now: now, on: db)
            return status
        }
        changes.publish("approval:\(id.raw)")
        return status
    }

    // MARK: The browser's side

    /// The state of approval `id` of the sign-in whose pending credential is
    /// `pendingCredential` (or of the password reset whose reset credential it
    /// is): `pending`, `approved`, `denied` or `expired`.
    /// - Throws: `SecondFactorFailure.invalidPendingCredential`, `PushFailure.notFound`.
    func state(_ id: ApprovalID, pendingCredential: String?) throws -> String {
        guard let credential = pendingCredential, SessionToken.isWellFormed(credential) else {
            throw SecondFactorFailure.invalidPendingCredential
        }
        let hash = SHA256.hex(credential)
        let now = clock.now().millis
        guard
            let (status, expiresAt) = try transactions.read({
                try PushRepository.state(
                    id, purpose: .signIn(pendingHash: hash), or: .passwordReset(resetHash: hash), on: $0)
            })
        else { throw PushFailure.notFound }
        if status == .pending && expiresAt <= now { return "expired" }
        return status.rawValue
    }
}

/// Refusals about push approvals.
enum PushFailure: Error, Equatable {
    /// No such pending approval (unknown, decided, expired, or another device's).
    case notFound
}

/// What other features do, in the same transaction, when a device decides an approval. Registered once at start-up,
/// so the push feature never reaches into another feature's tables.
final class PushDecisionHooks: Sendable {
    typealias Hook =
        @Sendable (_ purpose: Purpose, _ status: ApprovalStatus, _ now: Int64, any SQLConnection) throws
        -> Void
    private let hooks = Mutex<[Hook]>([])

    init() {}

    func add(_ hook: @escaping Hook) { hooks.withLock { $0.append(hook) } }

    func run(_ purpose: Purpose, _ status: ApprovalStatus, now: Int64, on db: any SQLConnection) throws {
        for hook in hooks.withLock({ $0 }) { try hook(purpose, status, now, db) }
    }
}
