import Crypto
import Foundation
import Synchronization
import TrifactorKit

/// A browser's session at the bank: where it is in signing in, who it is,
/// its CSRF token, and (in memory only) the customer's Trifactor session.
/// The browser holds only the cookie; the Trifactor token never leaves
/// this process.
public final class BankSession: Viewer, @unchecked Sendable {
    // @unchecked Sendable: every mutable field is read and written under `lock`.
    private let lock = NSLock()

    /// Where the browser is.
    public enum Stage: Sendable, Equatable {
        case start
        case password(email: String)
        case secondFactor(email: String)
        case signedIn(customerID: String, email: String)
    }

    public let csrf: String
    /// The customer's Trifactor session token lives here, not in any database.
    let secrets = SessionSecrets()
    private var _stage: Stage = .start
    private var _lastSeen: Date
    private var _trifactorCheckedAt: Date?
    private var _confirmedAt: Date?
    private var _activeAt: Date?
    private var _resolver: SecondFactorResolver?
    private var _push: (PushApproval, FactorHint)?
    private var _codeHint: FactorHint?
    private var _notice: String?
    var transfers: [String: PendingTransfer] = [:]
    private var _opening: Opening?
    private var _passwordless: PushSignIn?
    private var _returnPath: String?
    private var _passkeyEnrollment: String?
    private var _needsFactor = false
    private var _phoneEnrollment: PendingEnrollment?
    /// Signed in with a password alone: no balance until a second factor is added.
    var needsFactor: Bool { lock.withLock { _needsFactor } }
    func set(needsFactor: Bool) { lock.withLock { _needsFactor = needsFactor } }
    var phoneEnrollment: PendingEnrollment? { lock.withLock { _phoneEnrollment } }
    func set(phoneEnrollment: PendingEnrollment?) { lock.withLock { _phoneEnrollment = phoneEnrollment } }
    var passkeyEnrollment: String? { lock.withLock { _passkeyEnrollment } }
    func set(passkeyEnrollment: String?) { lock.withLock { _passkeyEnrollment = passkeyEnrollment } }
    private var _totp: (enrollment: PendingEnrollment, qrSVG: String)?
    /// Where /confirm sends the customer back to.
    func set(returnPath: String?) { lock.withLock { _returnPath = returnPath } }
    func takeReturnPath() -> String? { lock.withLock { defer { _returnPath = nil }; return _returnPath } }
    var totp: (enrollment: PendingEnrollment, qrSVG: String)? { lock.withLock { _totp } }
    func set(totp: (enrollment: PendingEnrollment, qrSVG: String)?) { lock.withLock { _totp = totp } }
    var passwordless: PushSignIn? { lock.withLock { _passwordless } }
    func set(passwordless: PushSignIn?) { lock.withLock { _passwordless = passwordless } }

    /// An account being opened: kept here between its steps, never in a database.
    struct Opening: Sendable {
        let name: String
        let email: String
        let password: String
        let phone: String
        let sitekey: Sitekey
        /// The email code was accepted (a retry after a refused text must not ask for it again).
        var emailVerified = false
        var enrollment: PendingEnrollment?
    }

    var opening: Opening? { lock.withLock { _opening } }
    func set(opening: Opening?) { lock.withLock { _opening = opening } }

    /// A session seen first at `now`, with a new CSRF token or the one its page already carries (a visitor's).
    init(now: Date, csrf: String = CSRF.token()) {
        _lastSeen = now
        self.csrf = csrf
    }

    func with<T>(_ body: (BankSession) -> T) -> T { lock.withLock { body(self) } }

    public var stage: Stage { lock.withLock { _stage } }
    /// Whether a customer is signed in (the stage is `.signedIn`).
    public var isSignedIn: Bool { if case .signedIn = stage { true } else { false } }

    /// Whether Trifactor should be asked again that the customer's session lives: never asked, or last answered `interval` ago.
    func trifactorCheckDue(now: Date, interval: TimeInterval) -> Bool {
        lock.withLock { _trifactorCheckedAt.map { now.timeIntervalSince($0) >= interval } ?? true }
    }

    /// Trifactor said at `now` that the customer's session lives.
    func trifactorChecked(_ now: Date) { lock.withLock { _trifactorCheckedAt = now } }
    var lastSeen: Date { lock.withLock { _lastSeen } }
    var confirmedAt: Date? { lock.withLock { _confirmedAt } }
    var resolver: SecondFactorResolver? { lock.withLock { _resolver } }
    var push: (PushApproval, FactorHint)? { lock.withLock { _push } }
    var codeHint: FactorHint? { lock.withLock { _codeHint } }

    func set(stage: Stage) { lock.withLock { _stage = stage } }
    func touch(_ now: Date) { lock.withLock { _lastSeen = now } }
    func confirm(_ now: Date) { lock.withLock { _confirmedAt = now; _lastSeen = now; _activeAt = now } }

    /// Whether a signed-in customer was away longer than `idle` (then balances hide until they confirm
    /// again); otherwise records this request as activity.
    func cameBack(now: Date, idle: TimeInterval) -> Bool {
        lock.withLock {
            if let active = _activeAt, now.timeIntervalSince(active) > idle { return true }
            _activeAt = now
            return false
        }
    }
    func set(resolver: SecondFactorResolver?) { lock.withLock { _resolver = resolver } }
    func set(push: (PushApproval, FactorHint)?) { lock.withLock { _push = push } }
    func set(codeHint: FactorHint?) { lock.withLock { _codeHint = codeHint } }
    /// A one-time message for the next page ("Signed out.", "Too many wrong codes…").
    func flash(_ text: String) { lock.withLock { _notice = text } }
    func takeNotice() -> String? { lock.withLock { defer { _notice = nil }; return _notice } }
    func pendingTransfer(_ id: String) -> PendingTransfer? { lock.withLock { transfers[id] } }
    func store(_ transfer: PendingTransfer) { lock.withLock { transfers[transfer.id] = transfer } }
    func dropTransfer(_ id: String) { lock.withLock { transfers[id] = nil } }
}

/// A transfer the customer reviewed, kept on the server: the form's hidden
/// field carries only its id, so a tampered amount or payee never reaches
/// the ledger.
public struct PendingTransfer: Sendable {
    public let id: String
    public let from: String
    public let to: Ledger.Destination
    public let toLabel: String
    public let amount: Amount
    public var authorizationID: String?
    public var factor: FactorHint?
    public var summary: String?
    /// For a passkey: the options whose challenge covers the action's hash.
    public var passkeyOptions: RequestOptions?
}
