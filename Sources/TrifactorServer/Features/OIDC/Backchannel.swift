import Core
import Crypto
import Foundation
import JOSE
import Messaging
import Store

/// OpenID CIBA Core 1.0: a client (a bank's call centre, a shop's counter) asks for a user's approval without a
/// browser. `/bc-authorize` checks the request and pushes it to the user's device, the binding message beside three
/// numbers; the user picks the number the client shows them (the answer's `binding_number`). The client polls the
/// token endpoint, or (ping mode) is told at its notification endpoint first. A hint that names nobody who can
/// approve gets the same answer as any other, so the endpoint never tells who has an account; such a request simply
/// expires. The same push approvals, limits and audit log as sign-ins.
struct BackchannelService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let push: PushService
    let outbox: Outbox
    /// The phone verification service, whose limits and budgets a texted link counts against as a texted code does.
    let verifications: PhoneVerificationService
    /// The issuer: the address of the approval page a text links to.
    let issuer: String
    /// The subject of a valid ID token this server issued to the client (CIBA Core §7.1 `id_token_hint`).
    let hintedSubject: @Sendable (_ token: String, _ clientID: String) -> String?

    /// The polling interval the answer names (CIBA Core §7.3), in seconds.
    static let interval = 5
    /// Lifetimes a client may ask for with `requested_expiry`, and the default.
    static let lifetimes = 30...300
    static let defaultLifetime = 120
    /// Requests per client: 30 at once, then one a second; at most 500 waiting at once.
    static let perClient = RateLimiter.Limit(burst: 30, rate: 1)
    static let maxWaiting: Int64 = 500
    /// CIBA Core §7.1 leaves the binding message's length to the server: short enough to read on a phone.
    static let maxBindingMessage = 100

    /// What `/bc-authorize` answers (CIBA Core §7.3), and the number to read to the user.
    struct Started: Sendable {
        let authReqID: String
        let expiresIn: Int
        let interval: Int
        let number: Int
    }

    /// Checks a back-channel authentication request of `client` and sends it to the user's device.
    /// - Throws: `OAuthError` with CIBA Core §13's codes.
    func start(_ p: [String: String], client: OIDCClient, audit: AuditContext) throws -> Started {
        guard client.grantTypes.contains(.ciba), let mode = client.cibaMode else {
            throw OAuthError(code: "unauthorized_client", description: "This client is not registered for CIBA.")
        }
        guard let scopes = Scope.parse(p["scope"] ?? ""), scopes.contains("openid") else {
            throw OAuthError.invalidScope("scope must include openid (CIBA Core §7.1).")
        }
        if let refused = client.unregisteredScope(in: scopes) {
            throw OAuthError.invalidScope("This client may not ask for the scope \(refused.prefix(64)).")
        }
        let hints = ["login_hint", "login_hint_token", "id_token_hint"].filter { p[$0] != nil }
        guard hints.count == 1 else {
            throw OAuthError.invalidRequest("Send exactly one of login_hint, login_hint_token and id_token_hint.")
        }
        let who = try Self.hinted(p, client: client, subject: hintedSubject)
        let message = p["binding_message"]
        if let message {
            guard (1...Self.maxBindingMessage).contains(message.count),
                AuthorizationDetails.Payment.isPlain(message)
            else {
                throw OAuthError(
                    code: "invalid_binding_message",
                    description: "binding_message must be 1 to \(Self.maxBindingMessage) characters of plain text.")
            }
        }
        var lifetime = Self.defaultLifetime
        if let text = p["requested_expiry"] {
            guard text.count <= 6, let seconds = Int(text), seconds > 0 else {
                throw OAuthError.invalidRequest("requested_expiry must be a positive whole number of seconds.")
            }
            lifetime = min(max(seconds, Self.lifetimes.lowerBound), Self.lifetimes.upperBound)
        }
        let token = p["client_notification_token"]
        if mode == .ping {
            // CIBA Core §7.1: required in ping mode; a bearer token (RFC 6750 §2.1's characters), at most 1024.
            guard let token, (1...1024).contains(token.utf8.count),
                token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7f })
            else {
                throw OAuthError.invalidRequest(
                    "client_notification_token is required in the ping mode (1024 at most).")
            }
        }
        let acr = ACR.requested((p["acr_values"] ?? "").split(separator: " ").map(String.init))
        let authReqID = Base64URL.encode(random.bytes(32))
        let id = SHA256.hex(authReqID)
        let now = clock.now().millis
        let expires = now + Int64(lifetime) * 1000
        var caller = audit
        caller.brand = AuditContext.brand(client.name)
        let (number, choices) = push.numbers()
        let approval = ApprovalID.random(using: random)
        // The link a user without a device gets by text (made for every request, so each does the same work).
        let link = Base64URL.encode(random.bytes(Self.linkBytes))
        // One transaction whoever the hint names, writing the same rows: a push to the device, or an approval only
        // a texted link decides, or a decoy that no device ever sees (as a passwordless push to an address without
        // a device); the request; a text, or a held decoy never sent; so neither the answer nor its time tells
        // whether the hint named someone who can approve, nor how.
        let device = try transactions.write { db -> Factor? in
            if let wait = try RateLimiter.take(
                "ciba:client:\(client.id)", limit: Self.perClient, nowMillis: now, on: db)
            {
                throw OAuthError(
                    code: "temporarily_unavailable", description: "Too many requests: try again in \(wait) s.",
                    status: 429, retryAfter: wait)
            }
            guard try BackchannelRepository.waiting(clientID: client.id, now: now, on: db) < Self.maxWaiting else {
                throw OAuthError(
                    code: "temporarily_unavailable",
                    description: "This client has \(Self.maxWaiting) requests waiting.",
                    status: 429, retryAfter: 60)
            }
            // A texted link is one factor: only for a client that takes it, and never when more was asked for.
            let approver = try Self.approver(
                who, texting: client.cibaText && (acr ?? .password) <= .password, now: now, on: db)
            // The factor the approval belongs to: a device lists it; a phone factor's is decided by the link only.
            let factor: Factor? =
                switch approver {
                case .device(let f)?, .phone(let f, _)?: f
                case nil: nil
                }
            let purpose = Purpose.backchannel(requestHash: id)
            try PushRepository.insert(
                id: approval, userID: factor?.userID, factorID: factor?.id, emailKey: nil, purpose: purpose,
                number: number, choices: choices, message: message.map { "\(client.name): \($0)" } ?? client.name,
                lifetime: Int64(lifetime) * 1000, client: caller, now: now, on: db)
            var texted: Factor?
            if case .phone(let phone, let user) = approver {
                texted = try text(
                    link, to: phone, user: user, client: client, message: message, minutes: (lifetime + 59) / 60,
                    requestID: id, audit: caller, now: now, on: db)
            } else {
                try decoyText(requestID: id, now: now, on: db)
            }
            try BackchannelRepository.insert(
                BackchannelRequest(
                    id: id, clientID: client.id, userID: factor?.userID.raw, scopes: scopes, acr: acr,
                    bindingMessage: message, approvalID: factor == nil ? nil : approval.raw, status: .pending,
                    interval: Self.interval, polledAt: nil, createdAt: now, expiresAt: expires,
                    linkHash: texted == nil ? nil : SHA256.hex(link)),
                on: db)
            let device: Factor? = if case .device(let f) = approver { f } else { nil }
            if mode == .ping, let token, let endpoint = client.cibaEndpoint {
                // Held until the device decides (CIBA Core §10.2), then sent, and retried, by the outbox.
                let body = String(
                    decoding: JSONValue.serialize(["auth_req_id": .string(authReqID), "token": .string(token)]),
                    as: UTF8.self)
                try outbox.enqueue(
                    channel: .cibaPing, to: endpoint, text: body, ref: "ciba:\(id)", held: true, now: now, on: db)
            }
            // As a passwordless push writes: the push sent, or its decoy.
            try AuditLog.append(
                device.map {
                    caller.event(
                        .pushSent, .success, userID: $0.userID,
                        detail: "approval=\(approval.raw) device=\($0.id.raw) ciba")
                } ?? caller.event(.pushDenied, .denied, detail: "ciba request reaching no device: decoy"), at: now,
                on: db)
            let reach = device != nil ? "" : texted != nil ? " by a texted link" : " reaching no device"
            try AuditLog.append(
                audit.event(
                    .oidcBackchannelStarted, .success, userID: factor?.userID,
                    detail: "client=\(client.id) approval=\(approval.raw)\(reach)"),
                at: now, on: db)
            return device
        }
        if let device { push.changes.publish("device:\(device.id.raw)") }
        return Started(authReqID: authReqID, expiresIn: lifetime, interval: Self.interval, number: number)
    }

    /// Who approves a request, and how.
    enum Approver {
        /// On the user's device, picking the number.
        case device(Factor)
        /// A user without a device, by a link texted to their phone factor's number.
        case phone(Factor, UserRecord)
    }

    /// Who may approve for the user `who` names: an enabled account's device (one with an approval key, released by
    /// the user's check, first), else their phone factor (a number they proved), while the user has had fewer than 3
    /// apps' requests in 10 minutes (counted apart from their own sign-ins, texted or pushed alike); nil otherwise.
    /// `texting`: whether a phone factor may approve (the client takes one-factor approvals and asked for no more).
    static func approver(_ who: Hinted, texting: Bool, now: Int64, on db: any SQLConnection) throws -> Approver? {
        let user =
            switch who {
            case .email(let email): try AccountRepository.find(email: email, on: db)
            case .subject(let subject): try AccountRepository.find(id: UserID(subject), on: db)
            }
        guard let user, user.disabledAt == nil,
            try PushRepository.count(
                userID: user.id, since: now - PushService.window, budget: .backchannel, on: db)
                < PushService.maxPerWindow
        else { return nil }
        let factors = try FactorRepository.list(user.id, on: db)
        let devices = factors.filter { $0.kind == .device }
        if let device = devices.first(where: {
            if case .device(let keys) = $0.credential { keys.approval != nil } else { false }
        }) ?? devices.first {
            return .device(device)
        }
        guard texting else { return nil }
        return factors.first { $0.kind == .phone && $0.credential.phone != nil }.map { .phone($0, user) }
    }

    /// Whom a request names.
    enum Hinted {
        case email(String)
        case subject(String)
    }

    /// The user a request's one hint names: an email (`login_hint`), an RFC 9493 subject identifier of format
    /// `email` (`login_hint_token`, a JSON object `{"sub_id": {"format": "email", "email": …}}`), or the subject of
    /// an ID token issued to this client (`id_token_hint`).
    static func hinted(
        _ p: [String: String], client: OIDCClient, subject: (String, String) -> String?
    ) throws -> Hinted {
        if let hint = p["login_hint"] {
            guard let email = EmailAddress(hint) else {
                throw OAuthError.invalidRequest("login_hint must be the user's email address.")
            }
            return .email(email.value)
        }
        if let token = p["login_hint_token"] {
            guard token.utf8.count <= 2048, let object = try? JSONValue.parseObject(Array(token.utf8)),
                let id = object["sub_id"]?.object, id["format"]?.string == "email",
                let email = id["email"]?.string.flatMap(EmailAddress.init)
            else {
                throw OAuthError.invalidRequest(
                    "login_hint_token must be {\"sub_id\": {\"format\": \"email\", \"email\": …}} (RFC 9493).")
            }
            return .email(email.value)
        }
        guard let token = p["id_token_hint"], let found = subject(token, client.id) else {
            throw OAuthError.invalidRequest("id_token_hint is not an ID token issued to this client.")
        }
        return .subject(found)
    }

    /// The device decided (in its transaction): a ping-mode client's held ping goes out now.
    func decided(_ purpose: Purpose, now: Int64, on db: any SQLConnection) throws {
        guard case .backchannel(let id) = purpose else { return }
        try outbox.release(ref: "ciba:\(id)", now: now, on: db)
    }
}
