import API
import Core
import Crypto
import Foundation
import HTTP
import Messaging
import Store

/// Delivery receipts and call events posted back by the providers:
///
/// - `GET` or `POST /v1/delivery/vonage/sms`: Vonage SMS delivery receipts,
///   signed with the account's signature secret (`sig`, HMAC-SHA256);
/// - `POST /v1/delivery/vonage/voice`: Vonage Voice API events, a JWT signed
///   with the signature secret that carries the body's SHA-256;
/// - `POST /v1/delivery/twilio`: Twilio message and call status callbacks,
///   signed by `X-Twilio-Signature` under the account's auth token.
///
/// A verified callback records the provider's status on its outbox message
/// (204); a text the provider could not deliver (`failed`, `undelivered`,
/// `rejected`, `expired`) moves its phone verification to the next step at
/// once (the call), instead of waiting for the step's timeout. An unsigned, mis-signed or stale one is refused (403) and audited,
/// after a token of the caller's rate-limit bucket, so forgeries cannot fill
/// the audit log. A genuine callback sent again (a provider's retry, or a
/// captured one replayed: Vonage's within their five minutes, Twilio's,
/// which carry no time, at any later moment) is answered 204 and changes
/// nothing: each is taken once, by its signature, for 31 days (longer than
/// the outbox keeps the messages they are about).
struct DeliveryRoutes {
    let transactions: Transactions
    let clock: Clock
    let accounts: [ProviderAccount]
    /// The public URL providers were given (Twilio signs the URL it calls).
    let publicURL: URL?
    let perIP: RateLimiter.Limit
    let verifications: PhoneVerificationService

    /// Statuses that mean a text will never arrive.
    static let undeliverable: Set<String> = ["failed", "undelivered", "rejected", "expired"]

    /// A route whose failures shared with the rest of the API (a database
    /// that is away: 503 with Retry-After) answer as their problems.
    private static func add(
        _ router: inout Router, _ method: String, _ path: String,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        router.add(method, path, APIRoutes.answeringFailures(handler))
    }

    func register(on router: inout Router) {
        for method in ["GET", "POST"] {
            Self.add(&router, method, "/v1/delivery/vonage/sms") { request in
                let parameters = method == "GET" ? request.query : Self.parameters(request)
                let client = AuditContext(request)
                guard let account = accounts.first(where: { $0.kind == .vonage && $0.key == parameters["api-key"] })
                else {
                    return try refuse("vonage sms", .unknownAccount, client: client)
                }
                guard let secret = account.callbackSecret else {
                    return try refuse("vonage sms", .noSecret, client: client)
                }
                let event: String
                do throws(ProviderCallbacks.Refusal) {
                    event = try ProviderCallbacks.checkVonageSignature(parameters, secret: secret, now: clock.now())
                } catch {
                    return try refuse("vonage sms", error, client: client)
                }
                return try record(
                    "vonage", reference: parameters["messageId"], status: parameters["status"],
                    error: parameters["err-code"].flatMap { $0 == "0" ? nil : $0 }, event: "vonage-sms:\(event)",
                    client: client)
            }
        }
        Self.add(&router, "POST", "/v1/delivery/vonage/voice") { request in
            let client = AuditContext(request)
            let secrets = accounts.filter { $0.kind == .vonage }.compactMap(\.callbackSecret)
            guard !secrets.isEmpty else { return try refuse("vonage voice", .noSecret, client: client) }
            var refusal = ProviderCallbacks.Refusal.unsigned
            var verified: String?
            for secret in secrets where verified == nil {
                do throws(ProviderCallbacks.Refusal) {
                    verified = try ProviderCallbacks.checkVonageJWT(
                        authorization: request.header("authorization"), body: request.body, secret: secret,
                        now: clock.now())
                } catch {
                    refusal = error
                }
            }
            guard let verified else { return try refuse("vonage voice", refusal, client: client) }
            let event = Self.parameters(request)
            return try record(
                "vonage", reference: event["uuid"], status: event["status"], error: nil,
                event: "vonage-voice:\(verified)", client: client)
        }
        Self.add(&router, "POST", "/v1/delivery/twilio") { request in
            let client = AuditContext(request)
            let pairs = ProviderCallbacks.formPairs(request.body)
            let fields = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
            guard let account = accounts.first(where: { $0.kind == .twilio && $0.key == fields["AccountSid"] }),
                let token = account.callbackSecret
            else {
                return try refuse("twilio", .unknownAccount, client: client)
            }
            // Twilio signs the whole URL it called, query string included.
            let url =
                (publicURL?.absoluteString.trimmingSuffix("/") ?? "") + request.path
                + (request.rawQuery.isEmpty ? "" : "?" + request.rawQuery)
            let event: String
            do throws(ProviderCallbacks.Refusal) {
                event = try ProviderCallbacks.checkTwilioSignature(
                    request.header("x-twilio-signature"), url: url, parameters: pairs, token: token)
            } catch {
                return try refuse("twilio", error, client: client)
            }
            return try record(
                "twilio", reference: fields["MessageSid"] ?? fields["CallSid"],
                status: fields["MessageStatus"] ?? fields["CallStatus"],
                error: fields["ErrorCode"], event: "twilio:\(event)", client: client)
        }
    }

    /// A form-encoded or JSON body as names and values (JSON values as text).
    static func parameters(_ request: Request) -> [String: String] {
        if request.header("content-type")?.lowercased().hasPrefix("application/json") == true {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
                return [:]
            }
            return object.compactMapValues { value in
                switch value {
                case let text as String: text
                case let number as NSNumber: number.stringValue
                default: nil
                }
            }
        }
        return Dictionary(ProviderCallbacks.formPairs(request.body), uniquingKeysWith: { first, _ in first })
    }

    /// How long a callback's signature is remembered: past the outbox's 30 days, a replay finds no message.
    static let rememberedFor: Int64 = 31 * 86_400_000

    /// Records a verified status on the message the provider knows as `reference`,
    /// once per `event` (what makes this callback unique: its signature).
    private func record(
        _ provider: String, reference: String?, status: String?, error: String?, event: String,
        client: AuditContext
    ) throws -> Response {
        guard let reference, (1...100).contains(reference.count), let status, let normalized = Self.status(status)
        else {
            throw HTTPProblem.malformedRequest("A delivery receipt needs the message id and its status.")
        }
        let now = clock.now().millis
        try transactions.write { db in
            guard try DeliveryCallbackRepository.remember(SHA256.hex(event), now: now, on: db) else { return }
            let found = try Outbox.recordReceipt(
                provider: provider, reference: reference, status: normalized, now: now, on: db)
            let detail =
                "\(provider) \(reference) \(normalized)" + (error.map { " error=\($0.prefix(20))" } ?? "")
                + (found.isEmpty ? " (no such message)" : "")
            try AuditLog.append(client.event(.deliveryReceipt, .success, detail: detail), at: now, on: db)
            guard Self.undeliverable.contains(normalized) else { return }
            for message in found where message.channel == Channel.sms.rawValue {
                if let ref = message.ref, ref.hasPrefix("verify:") {
                    try verifications.deliveryFailed(ref: ref, on: db)
                }
            }
        }
        return Response(status: 204)
    }

    /// Audits a refused callback (after the caller's rate limit) and answers 403.
    private func refuse(_ provider: String, _ refusal: ProviderCallbacks.Refusal, client: AuditContext) throws
        -> Response
    {
        let now = clock.now().millis
        let wait = try transactions.write { db -> Int? in
            if let wait = try RateLimiter.take("receipt:ip:\(client.clientKey)", limit: perIP, nowMillis: now, on: db) {
                return wait
            }
            try AuditLog.append(
                client.event(.deliveryReceiptRefused, .denied, detail: "\(provider): \(refusal)"), at: now, on: db)
            return nil
        }
        if let wait {
            throw HTTPProblem(
                status: 429, code: .rateLimited, title: "Too many requests", detail: "Try again later.",
                headers: [("Retry-After", String(wait))])
        }
        throw HTTPProblem(
            status: 403, code: .forbidden, title: "Forbidden", detail: "The callback's signature could not be verified."
        )
    }

    /// A provider's status word, lower-cased (`delivered`, `undelivered`, `completed`, `no-answer`…); nil when it is not one.
    static func status(_ text: String) -> String? {
        let lowered = text.lowercased()
        guard (1...24).contains(lowered.count),
            lowered.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-" || $0 == "_") })
        else { return nil }
        return lowered
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
