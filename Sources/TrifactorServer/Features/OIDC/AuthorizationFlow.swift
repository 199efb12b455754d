import Foundation

/// One authorization request on its way through the hosted sign-in: a
/// value state machine (requested → signed in → consented → code issued →
/// exchanged), persisted between pages. `next` decides, without IO, what
/// the browser sees next; the routes do what it says.
struct AuthorizationFlow: Sendable, Equatable {
    enum Status: String, Sendable, Codable {
        case requested
        case codeIssued = "code_issued"
        case exchanged
        /// The client was answered without a code (a cancel, a denial, an error): the flow is over.
        case answered
    }

    /// What the flow learned on the way, kept as JSON beside the request.
    struct Progress: Sendable, Codable, Equatable {
        var status: Status = .requested
        /// The user proved who they are in this flow (so `prompt=login` and `max_age` are met).
        var authenticatedHere = false
        /// The user chose the account in this flow (`prompt=select_account`).
        var accountChosen = false
        /// The user agreed in this flow (`prompt=consent`).
        var consentedHere = false
        /// The email typed on the first page, shown on the password page.
        var email: String?
        /// The account's language, once the user proved who they are in this browser (the pages' language when
        /// the client sent no `ui_locales` of ours).
        var language: String?
        /// The SHA-256 of the browser cookie of the browser that started the flow: only it may continue it.
        var browser: String?
        /// The approval (`AuthorizationID`) that binds the second factor to the request's authorization details,
        /// once one was started on the payment page.
        var detailsAuthorization: String?
        /// The factor that approval was made for.
        var detailsFactor: String?
        /// Whether that approval was given: the code may be issued.
        var detailsApproved: Bool?
        /// The device's own approval, apart from the text's or passkey's above (so that looking at another way never
        /// ends it): its `AuthorizationID`, the device, the push (`ApprovalID`) and the number the page shows. Once
        /// the device approves, it becomes the approval above.
        var detailsPushAuthorization: String?
        var detailsPushFactor: String?
        var detailsPush: String?
        var detailsNumber: Int?
        /// The device code (its SHA-256) this sign-in is for (RFC 8628): it ends on the device's confirmation page,
        /// never with a code for a redirect URI.
        var device: String?
    }

    /// The browser's session as the flow needs it.
    struct Session: Sendable, Equatable {
        let userID: String
        let sessionID: String
        let level: ACR
        /// When the user last proved who they are (ms).
        let authTime: Int64
        /// Whether the user has a second factor to prove.
        let hasSecondFactor: Bool
        /// Whether the user has a hardware-bound key (passkey or device approval key).
        let hasHardwareKey: Bool
    }

    /// What the browser is shown next.
    enum Next: Equatable {
        /// Email and password (or a passkey).
        case signIn
        /// "Continue as …" or another account.
        case chooseAccount
        /// A stronger factor on top of the session.
        case stepUp(to: ACR)
        /// The user must add a second factor first (none is enrolled, the client asks for one).
        case addSecondFactor
        case consent
        /// The authorization details (a payment) approved with a second factor bound to them.
        case approveDetails
        case issueCode
        /// Back to the client with this error.
        case fail(AuthorizationError)
    }

    let id: String
    let request: AuthorizationRequest
    var progress: Progress
    let createdAt: Int64
    let expiresAt: Int64

    /// The next step, given the browser's session (nil: none), whether the user agreed to the client's scopes
    /// before, whether the client is first party, and the time.
    func next(session: Session?, consented: Bool, firstParty: Bool, now: Int64) -> Next {
        let silent = request.has(.none)
        guard let session else { return silent ? .fail(.loginRequired) : .signIn }
        // OIDC Core §3.1.2.1 id_token_hint: only the user it names may be signed in for it.
        if let subject = request.hintedSubject, subject != session.userID {
            return silent ? .fail(.loginRequired) : .signIn
        }
        if !progress.authenticatedHere {
            if request.has(.login) { return .signIn }
            // OIDC Core §3.1.2.1 max_age: an older proof is not enough (max_age=0 is prompt=login).
            if let maxAge = request.maxAge, now &- session.authTime > Int64(min(maxAge, 315_360_000)) &* 1000 {
                return silent ? .fail(.loginRequired) : .signIn
            }
            if request.has(.selectAccount) && !progress.accountChosen { return .chooseAccount }
        }
        if let wanted = request.requestedLevel, session.level < wanted {
            if silent { return .fail(.interactionRequired) }
            if !session.hasSecondFactor { return .addSecondFactor }
            if wanted == .hardwareKey && !session.hasHardwareKey {
                return .fail(
                    AuthorizationError(
                        code: "unmet_authentication_requirements",
                        description: "The user has no passkey or device key for the level asked for."))
            }
            return .stepUp(to: wanted)
        }
        if !firstParty && !consented || request.has(.consent) && !progress.consentedHere {
            return silent ? .fail(.consentRequired) : .consent
        }
        // RFC 9396: a payment is approved each time, with a factor bound to it; a consent never stands for it.
        if request.authorizationDetails != nil && progress.detailsApproved != true {
            return silent ? .fail(.interactionRequired) : .approveDetails
        }
        return .issueCode
    }
}
