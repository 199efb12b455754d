import Core
import Crypto
import Foundation
import Messaging
import Phone
import Store

/// CIBA's fallback for a user without a device: a text to their phone factor's number, carrying a link to a hosted
/// page that names the client and the binding message and offers Approve and Deny. The link's code (128 bits, stored
/// as SHA-256) decides the request's approval once, until the request expires. It proves one factor, the phone's
/// possession: the grant says so (`acr` the one-factor level, `amr` `sms`), so a request that asked for more ends
/// denied.
extension BackchannelService {
    /// Random bytes in a texted link's code: 128 bits.
    static let linkBytes = 16
    /// The page a text links to (the code in the query: the access log writes paths, not queries).
    static let linkPath = "/ciba/approve"

    /// Texts `link` to the phone factor's number (inside the request's transaction), through the outbox, under the
    /// limits and budgets of a texted code (per number, per country, the spending budgets, the conversion guard).
    /// Nil when no text went (a limit refused it, or the conversion guard would hold it): the request answers alike
    /// and expires.
    func text(
        _ link: String, to phone: Factor, user: UserRecord, client: OIDCClient, message: String?, minutes: Int,
        requestID: String, audit: AuditContext, now: Int64, on db: any SQLConnection
    ) throws -> Factor? {
        guard let number = phone.credential.phone else { return nil }
        let texts = outbox.texts
        let start = PhoneVerificationService.Start(
            brand: texts.brand, locale: texts.locale(user: user.locale),
            steps: [.init(channel: .sms, to: number.digits)], countryCodes: [number.countryCallingCode],
            channelTimeout: 120, codeLength: 6, customCode: nil, clientRef: nil, userID: user.id, scope: "ciba")
        // A text the conversion guard would hold for an operator's review could not be released before the request
        // expires (the review queue releases phone verifications): it is not sent, as over a limit.
        var refusal: String?
        do {
            if try verifications.limits(
                before: false, start, key: .internalMFA, client: audit,
                now: Date(timeIntervalSince1970: Double(now) / 1000), on: db)
            {
                refusal = "held by the conversion guard"
            }
        } catch is PhoneVerificationFailure {
            refusal = "a limit of the number or a budget"
        }
        if let refusal {
            try AuditLog.append(
                audit.event(
                    .oidcBackchannelTexted, .denied, userID: user.id,
                    detail: "client=\(client.id) not texted: \(refusal)"),
                at: now, on: db)
            return nil
        }
        let language = texts.language(locale: nil, user: user.locale)
        let body = texts.backchannelLink(
            client: client.name, message: message, link: issuer + Self.linkPath + "?code=" + link, minutes: minutes,
            language: language)
        try outbox.enqueue(
            channel: .sms, to: number.digits, text: body, ref: "ciba:\(requestID):text",
            locale: texts.locale(user: user.locale), now: now, on: db)
        try AuditLog.append(
            audit.event(
                .oidcBackchannelTexted, .success, userID: user.id,
                detail: "client=\(client.id) factor=\(phone.id.raw)"),
            at: now, on: db)
        return phone
    }

    /// The text a request to someone else does not send: a held message never released (swept with the held pings),
    /// and the count of a bucket of its own, so the request writes as a texted one does.
    func decoyText(requestID: String, now: Int64, on db: any SQLConnection) throws {
        _ = try RateLimiter.take(
            "ciba:text:decoy", limit: RateLimiter.Limit(burst: 1_000, rate: 100), nowMillis: now, on: db)
        try outbox.enqueue(
            channel: .sms, to: "", text: "", ref: "ciba:\(requestID):decoy", held: true, now: now, on: db)
    }

    /// What a texted link's page shows.
    struct Link: Sendable {
        enum State: Sendable { case waiting, approved, denied, expired }
        let state: State
        let clientName: String
        let logoURI: String?
        let bindingMessage: String?
        /// The user's language (they proved the phone: their own words are no one else's to learn).
        let locale: String?
        /// The SHA-256 of the code: what the page's CSRF token is bound to.
        let hash: String
    }

    /// The request a link's `code` names, as its page shows it; nil for a code that names none (malformed, unknown,
    /// or swept a day after its expiry).
    func link(_ code: String?) throws -> Link? {
        guard let hash = Self.linkHash(code) else { return nil }
        let now = clock.now().millis
        return try transactions.read { db in try Self.link(hash, now: now, on: db) }
    }

    /// Approves or denies the request a link's `code` names, once, while it waits: the approval is decided as a
    /// device decides it (a ping-mode client's held ping goes out now). The link's page afterwards, whatever
    /// happened (decided before, in another tab, expired).
    func decide(_ code: String?, approve: Bool, audit: AuditContext) throws -> Link? {
        guard let hash = Self.linkHash(code) else { return nil }
        let now = clock.now().millis
        return try transactions.write { db -> Link? in
            guard let found = try Self.link(hash, now: now, on: db) else { return nil }
            guard found.state == .waiting, let request = try BackchannelRepository.find(linkHash: hash, on: db),
                let approval = request.approvalID,
                try PushRepository.decide(ApprovalID(approval), approve ? .approved : .denied, at: now, on: db)
            else { return found }
            try decided(.backchannel(requestHash: request.id), now: now, on: db)
            try AuditLog.append(
                approve
                    ? audit.event(
                        .oidcBackchannelLinkApproved, .success, userID: request.userID.map(UserID.init),
                        detail: "client=\(request.clientID) approval=\(approval)")
                    : audit.event(
                        .oidcBackchannelDenied, .denied, userID: request.userID.map(UserID.init),
                        detail: "client=\(request.clientID) denied by the texted link"),
                at: now, on: db)
            return try Self.link(hash, now: now, on: db)
        }
    }

    /// The SHA-256 of a well-formed code (22 base64url characters), nil otherwise.
    static func linkHash(_ code: String?) -> String? {
        guard let code, code.utf8.count == 22, Base64URL.decode(code)?.count == linkBytes else { return nil }
        return SHA256.hex(code)
    }

    private static func link(_ hash: String, now: Int64, on db: any SQLConnection) throws -> Link? {
        guard let request = try BackchannelRepository.find(linkHash: hash, on: db),
            let client = try ClientRepository.find(request.clientID, on: db),
            let approval = try request.approvalID.flatMap({ try BackchannelRepository.approval($0, on: db) })
        else { return nil }
        let state: Link.State =
            switch (request.status, approval.status) {
            case (.issued, _), (_, .approved): .approved
            case (.denied, _), (_, .denied): .denied
            case (.pending, .pending): request.expiresAt > now && approval.expiresAt > now ? .waiting : .expired
            }
        let user = try request.userID.flatMap { try AccountRepository.find(id: UserID($0), on: db) }
        return Link(
            state: state, clientName: client.name, logoURI: client.logoURI, bindingMessage: request.bindingMessage,
            locale: user?.locale, hash: hash)
    }
}
