import Crypto
import Foundation
import Synchronization
import TrifactorKit

/// A browser's session at the bank: where it is in signing in, who it is,
/// its CSRF token, and (in memory only) the customer's Trifactor session
/// and the steps under way (`BankSession+Flows.swift`). The browser holds
/// only the cookie; the Trifactor token never leaves this process.
package final class BankSession: Viewer, @unchecked Sendable {
    // @unchecked Sendable: every mutable field is read and written under `lock`.
    private let lock = NSLock()

    /// Where the browser is.
    package enum Stage: Sendable, Equatable {
        case start
        case password(email: String)
        case secondFactor(email: String)
        case signedIn(customerID: String, email: String)
    }

    package let csrf: String
    /// The customer's Trifactor session token lives here, not in any database.
    let secrets = SessionSecrets()
    private var _stage: Stage = .start
    private var _lastSeen: Date
    private var _trifactorCheckedAt: Date?
    private var _confirmedAt: Date?
    private var _activeAt: Date?
    private var _resolver: SecondFactorResolver?
    private var _push: (PushApproval, FactorHint)?
    private var _passwordless: PushSignIn?
    private var _code: CodeChallenge?
    private var _notice: String?
    private var _draft: (path: String, draft: FormDraft, at: Date)?
    private var _needsFactor = false
    private var _flows = Flows()
    private var _standard: StandardSignIn?

    /// A session seen first at `now`, with a new CSRF token or the one its page already carries (a visitor's).
    init(now: Date, csrf: String = CSRF.token()) {
        _lastSeen = now
        self.csrf = csrf
    }

    /// Reads or changes the steps under way, under the session's lock.
    func flows<T>(_ body: (inout Flows) throws -> T) rethrows -> T { try lock.withLock { try body(&_flows) } }

    package var stage: Stage { lock.withLock { _stage } }
    /// Whether a customer is signed in (the stage is `.signedIn`).
    package var isSignedIn: Bool { if case .signedIn = stage { true } else { false } }
    /// The signed-in customer's id, if any.
    var customerID: String? { if case .signedIn(let id, _) = stage { id } else { nil } }

    /// Signed in with a password alone: no balance until a second factor is added.
    var needsFactor: Bool { lock.withLock { _needsFactor } }
    func set(needsFactor: Bool) { lock.withLock { _needsFactor = needsFactor } }

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
    var passwordless: PushSignIn? { lock.withLock { _passwordless } }
    /// The code being asked for at sign-in or on coming back.
    var code: CodeChallenge? { lock.withLock { _code } }
    var codeHint: FactorHint? { code?.hint }

    /// Who signed in through Trifactor's hosted sign-in (the standard path): their subject, the provider's session
    /// (so a back-channel logout ends this session) and the ID token (the hint of RP-initiated logout). Nil on the SDK
    /// path, whose sessions hold a Trifactor session token instead.
    typealias StandardSignIn = (subject: String, sessionID: String?, idToken: String)
    var standard: StandardSignIn? { lock.withLock { _standard } }
    var standardSubject: String? { standard?.subject }
    func set(standard: StandardSignIn?) { lock.withLock { _standard = standard } }

    func set(stage: Stage) { lock.withLock { _stage = stage } }
    func touch(_ now: Date) { lock.withLock { _lastSeen = now } }
    func confirm(_ now: Date) {
        lock.withLock {
            _confirmedAt = now
            _lastSeen = now
            _activeAt = now
        }
    }

    /// Whether a signed-in customer was away longer than `idle` (then balances hide until they confirm
    /// again); otherwise records this request as activity.
    func cameBack(now: Date, idle: TimeInterval) -> Bool {
        lock.withLock {
            if let active = _activeAt, now.timeIntervalSince(active) > idle { return true }
            _activeAt = now
            return false
        }
    }

    /// Whether the customer has been away longer than `idle`, without counting this as activity.
    func isAway(now: Date, idle: TimeInterval) -> Bool {
        lock.withLock { _activeAt.map { now.timeIntervalSince($0) > idle } ?? false }
    }

    func set(resolver: SecondFactorResolver?) { lock.withLock { _resolver = resolver } }
    func set(push: (PushApproval, FactorHint)?) { lock.withLock { _push = push } }
    func set(passwordless: PushSignIn?) { lock.withLock { _passwordless = passwordless } }
    func set(code: CodeChallenge?) { lock.withLock { _code = code } }

    /// Drops every step of a sign-in under way (the stage is left to the caller).
    func dropSignIn() {
        lock.withLock {
            _resolver = nil
            _push = nil
            _passwordless = nil
            _code = nil
        }
    }

    /// A one-time message for the next page ("Signed out.", "Too many wrong codes…").
    func flash(_ text: String) { lock.withLock { _notice = text } }
    func takeNotice() -> String? {
        lock.withLock {
            defer { _notice = nil }
            return _notice
        }
    }

    /// How long a refused form's draft shows on its page (a refresh shows it again; a later visit does not).
    static let draftLifetime: TimeInterval = 60

    /// Keeps a refused form's `draft` for the views of the page at `path` in the next `draftLifetime`.
    func keep(_ draft: FormDraft, for path: String, now: Date) { lock.withLock { _draft = (path, draft, now) } }
    /// The draft kept for `path`, if it is recent; a draft kept for another page stays.
    func draft(for path: String, now: Date) -> FormDraft? {
        lock.withLock {
            guard let kept = _draft, kept.path == path, now.timeIntervalSince(kept.at) < Self.draftLifetime else {
                return nil
            }
            return kept.draft
        }
    }
    /// Forgets the kept draft (a form was posted: the customer moved on, or its own draft replaces it).
    func dropDraft() { lock.withLock { _draft = nil } }

    func pendingTransfer(_ id: String) -> PendingTransfer? { flows { $0.transfers[id] } }
    func store(_ transfer: PendingTransfer) { flows { $0.transfers[transfer.id] = transfer } }
    func dropTransfer(_ id: String) { flows { $0.transfers[id] = nil } }
}
