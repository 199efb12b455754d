import Core
import Crypto
package import Foundation

/// Texts through the Vonage SMS API and calls through the Vonage Voice API.
///
/// - SMS: `POST {rest.nexmo.com}/sms/json`, form-encoded `api_key`,
///   `api_secret`, `from`, `to`, `text`, `type` (`unicode` for a UCS-2
///   text), `client-ref` (the outbox id), and with a public URL `callback`
///   and `status-report-req=1`. Vonage answers 200 with a `status` per
///   message part: `0` accepted, `1` throttled and `5` internal error are
///   worth retrying; anything else (invalid number, `9` quota or balance,
///   `29` non-whitelisted destination…) is a refusal.
/// - Voice: `POST {api.nexmo.com}/v1/calls` with a JWT (RS256, the
///   application's key) and an NCCO whose `talk` action speaks the text in the
///   message's language; 201 with the call's `uuid`.
package struct VonageSender: MessageSender {
    let account: ProviderAccount
    let http: ProviderHTTP
    let signingKey: RSASigningKey?
    /// Where delivery receipts and call events are posted back (nil: none asked for).
    let callbackBase: URL?

    /// - Throws: `ProviderAccount.Invalid` when the private key is not an RSA key.
    package init(_ account: ProviderAccount, callbackBase: URL?, caFile: String? = nil) throws(ProviderAccount.Invalid)
    {
        precondition(account.kind == .vonage)
        self.account = account
        self.callbackBase = callbackBase
        http = ProviderHTTP(caFile: caFile)
        if let pem = account.privateKeyPEM {
            do { signingKey = try RSASigningKey(pem: pem) } catch {
                throw ProviderAccount.Invalid("vonage: private_key_file is not an RSA private key in PEM (\(error))")
            }
        } else {
            signingKey = nil
        }
    }

    package var channels: Set<Channel> { account.channels }
    package var longestSend: Double { Double(http.timeout) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        switch message.channel {
        case .sms: try text(message)
        case .voice: try call(message)
        case .email, .logout, .cibaPing:
            throw DeliveryError(reason: "vonage: no \(message.channel.rawValue)", retryable: false)
        }
    }

    // MARK: SMS API

    static let smsStatuses: [String: String] = [
        "1": "throttled", "2": "missing parameters", "3": "invalid parameters", "4": "invalid credentials",
        "5": "internal error",
        "6": "invalid message", "7": "number barred", "8": "partner account barred",
        "9": "partner quota violation (balance)",
        "10": "too many existing binds", "11": "account not enabled for HTTP", "12": "message too long",
        "14": "invalid signature",
        "15": "invalid sender address", "22": "invalid network code", "23": "invalid callback URL",
        "29": "non-whitelisted destination",
        "32": "signature and API secret disallowed", "33": "number de-activated",
    ]

    func text(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        var fields = [
            ("api_key", account.key), ("api_secret", account.secret), ("from", account.from), ("to", message.to),
            ("text", message.text), ("type", SMSText.segments(message.text).encoding == .gsm7 ? "text" : "unicode"),
            ("client-ref", message.id),
        ]
        if let callbackBase {
            fields += [
                ("status-report-req", "1"),
                ("callback", callbackBase.appendingPathComponent("v1/delivery/vonage/sms").absoluteString),
            ]
        }
        let url = (account.apiBase ?? URL(string: "https://rest.nexmo.com")!).appendingPathComponent("sms/json")
        let answer = try http.post(
            url, contentType: "application/x-www-form-urlencoded", body: ProviderHTTP.form(fields),
            provider: "vonage sms")
        guard answer.status == 200 else { throw Self.httpFailure("vonage sms", answer) }
        guard let parts = answer.json["messages"] as? [[String: Any]], let first = parts.first else {
            throw DeliveryError(reason: "vonage sms: an answer without messages", retryable: true)
        }
        for part in parts {
            let status = part["status"] as? String ?? "?"
            guard status == "0" else {
                let meaning =
                    Self.smsStatuses[status] ?? (part["error-text"] as? String).map { String($0.prefix(80)) }
                    ?? "unknown status"
                throw DeliveryError(
                    reason: "vonage sms: status \(status) \(meaning)", retryable: status == "1" || status == "5")
            }
        }
        return Delivery(provider: "vonage", reference: first["message-id"] as? String)
    }

    // MARK: Voice API

    func call(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard let signingKey, let applicationID = account.applicationID, let voiceFrom = account.voiceFrom else {
            throw DeliveryError(reason: "vonage: no voice application configured", retryable: false)
        }
        var body: [String: Any] = [
            "to": [["type": "phone", "number": message.to]],
            "from": ["type": "phone", "number": voiceFrom],
            "ncco": [
                ["action": "talk", "text": message.text, "language": MessageCatalog.voiceTag(for: message.locale)]
            ],
        ]
        if let callbackBase {
            body["event_url"] = [callbackBase.appendingPathComponent("v1/delivery/vonage/voice").absoluteString]
            body["event_method"] = "POST"
        }
        let jwt: String
        do { jwt = try Self.jwt(applicationID: applicationID, key: signingKey, now: Date()) } catch {
            throw DeliveryError(reason: "vonage voice: cannot sign the JWT (\(error))", retryable: false)
        }
        let json = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        let url = (account.apiBase ?? URL(string: "https://api.nexmo.com")!).appendingPathComponent("v1/calls")
        let answer = try http.post(
            url, contentType: "application/json", body: json, headers: ["Authorization: Bearer \(jwt)"],
            provider: "vonage voice")
        guard answer.status == 201 || answer.status == 200 else { throw Self.httpFailure("vonage voice", answer) }
        return Delivery(provider: "vonage", reference: answer.json["uuid"] as? String)
    }

    /// The Voice API's JWT: RS256 over `application_id`, `iat`, `exp` (15 minutes) and a fresh `jti`.
    static func jwt(applicationID: String, key: RSASigningKey, now: Date) throws(OpenSSLError) -> String {
        let iat = Int(now.timeIntervalSince1970)
        let header = #"{"alg":"RS256","typ":"JWT"}"#
        let claims =
            #"{"application_id":"\#(applicationID)","iat":\#(iat),"exp":\#(iat + 900),"jti":"\#(UUID().uuidString.lowercased())"}"#
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)))
    }

    /// A non-success HTTP status: 429 and 5xx are worth retrying, other 4xx are refusals.
    static func httpFailure(_ provider: String, _ answer: ProviderHTTP.Answer) -> DeliveryError {
        let json = answer.json
        let said =
            (json["title"] as? String ?? json["error_title"] as? String ?? json["message"] as? String).map {
                " \($0.prefix(80))"
            } ?? ""
        let code = (json["code"]).map { " code \($0)" } ?? ""
        return DeliveryError(
            reason: "\(provider): HTTP \(answer.status)\(code)\(said)",
            retryable: answer.status == 429 || answer.status >= 500)
    }
}
