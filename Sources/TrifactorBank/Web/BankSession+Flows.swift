import Foundation
import Sitekeys
import TrifactorKit

/// The steps a session has under way, kept in memory between their pages
/// (each page is a GET that renders them; each form posts, changes them and
/// redirects): never in a database, gone with the session.
struct Flows: Sendable {
    /// An account being opened.
    var opening: Opening?
    /// A mobile being added (the setup page, or settings).
    var phoneSetup: PhoneSetup?
    /// What the customer was doing when asked to confirm it's them, done once they have.
    var stepUp: StepUpIntent?
    /// The page a customer back after the idle time was opening: where confirming takes them.
    var comeBackTo: String?
    /// An authenticator app being added, and the wrong codes typed for it.
    var totp: (enrollment: PendingEnrollment, qrSVG: String)?
    var totpTries = 0
    /// A passkey being added (Trifactor's enrollment session).
    var passkeyEnrollment: String?
    /// Recovery codes just made: shown, copied, downloaded or printed from here, then forgotten.
    var recoveryCodes: [String]?
    /// Transfers reviewed and not yet sent, by id.
    var transfers: [String: PendingTransfer] = [:]
    /// Transfers whose authorization is being asked for now: a second submit waits for it rather than asking again.
    var authorizing: Set<String> = []
    /// Transfers sent, by id: what a resent form or a refreshed page says instead of sending them again.
    var sent: [String: String] = [:]
    /// A forgotten password being reset.
    var reset: ResetFlow?
    /// Wrong reset codes typed per email in the current window: kept across "Start again", as Trifactor keeps them.
    var resetTries: [String: EmailTries] = [:]
    /// The same for an opening's email codes.
    var openingTries: [String: EmailTries] = [:]
    /// Requests pushed to Trifactor (the standard path) and not answered yet, by `state`.
    var standard: [String: StandardPending] = [:]
    /// Bank by phone: the requests a member of staff started, by id.
    var phoneRequests: [String: BankApp.PhoneRequest] = [:]
}

/// Wrong emailed codes typed in the window that began at `window` (Trifactor counts five per ten minutes, a new code
/// included, so resending or starting again buys no guesses).
struct EmailTries: Sendable {
    var tries = 0
    var window: Date
}

/// A forgotten password being reset: the email, then (once its emailed code
/// was right) Trifactor's reset, the factor chosen to prove it, and for a
/// device's approval or a passkey the new password typed before the proof
/// (in memory only, until the proof is in or the reset ends). `id` tells this
/// reset from a newer one started in another tab, so a slow request never
/// writes over it.
struct ResetFlow: Sendable {
    let id = UUID()
    let email: String
    var reset: PasswordReset?
    var factor: CodeChallenge?
    var push: PushApproval?
    /// A push is being sent (a double click sends one).
    var pushing = false
    var newPassword: String?

    init(email: String) { self.email = email }
}

/// A code asked for in one step (a sign-in, coming back, a mobile being
/// added): the factor it is for, and the wrong codes typed for this very
/// code. A texted code stops working after `BankApp.textedCodeTries` wrong
/// ones (Trifactor's phone verification ends then), so the page asks for a
/// new code instead of letting the customer type the right one in vain.
struct CodeChallenge: Sendable, Equatable {
    let hint: FactorHint
    var wrongTries = 0

    init(_ hint: FactorHint) { self.hint = hint }

    /// Whether the code was texted (or read out by a call).
    var isTexted: Bool { if case .phone = hint.kind { true } else { false } }
}

/// An account being opened: kept in the session between its steps, never in a database.
struct Opening: Sendable {
    let name: String
    let email: String
    let password: String
    /// E.164; "Change the number" replaces it.
    var phone: String
    let sitekey: Sitekey
    /// The email code was accepted (a retry after a refused text must not ask for it again).
    var emailVerified = false
    /// Wrong email codes typed in the current window, which began `emailWindow` (Trifactor counts five per ten
    /// minutes, a new code included, so resending buys no guesses).
    var emailTries = 0
    var emailWindow: Date
    /// The mobile's enrollment, once a text was sent to it.
    var enrollment: PendingEnrollment?
    /// Wrong codes typed for the last text.
    var phoneTries = 0
    /// Why the last text could not be sent, when it could not (the page offers to send it again).
    var textRefused: String?
}

/// A mobile being added after the account was opened: the number and its enrollment.
struct PhoneSetup: Sendable {
    var number: String
    var enrollment: PendingEnrollment
    var tries = 0
}

/// What the customer was doing when Trifactor wanted a fresh second factor:
/// the confirmation page says why it asks, and once confirmed the bank
/// takes the customer back to it.
enum StepUpIntent: Sendable, Equatable {
    case addAuthenticatorApp
    case addPasskey
    case addMobile(number: String)
    case newRecoveryCodes
    case removeFactor(id: String, name: String)
    case changePassword

    /// The heading's end: "Confirm it's you to …".
    var reason: String {
        switch self {
        case .addAuthenticatorApp: "to add an authenticator app"
        case .addPasskey: "to add a passkey"
        case .addMobile: "to add your mobile"
        case .newRecoveryCodes: "to make new recovery codes"
        case .removeFactor(_, let name): "to remove \(name)"
        case .changePassword: "to change your password"
        }
    }
}

/// A transfer the customer reviewed, kept on the server: the forms carry
/// only its id, so a tampered amount or payee never reaches the ledger.
struct PendingTransfer: Sendable {
    let id: String
    let from: String
    let fromName: String
    let to: Ledger.Destination
    let toLabel: String
    let amount: Amount
    /// The customer's reference, shown on both statements (not bound: Trifactor binds amount, payee and source).
    let reference: String?
    /// The form as typed, for "Change it".
    let form: FormDraft
    var authorizationID: String?
    var factor: FactorHint?
    var summary: String?
    /// For a passkey: the options whose challenge covers the action's hash.
    var passkeyOptions: RequestOptions?
    /// Wrong codes typed for the last code.
    var wrongTries = 0
}
