package import Foundation

/// Texts and calls through Twilio's REST API (version 2010-04-01), with HTTP
/// Basic authentication by Account SID and auth token:
///
/// - `POST /2010-04-01/Accounts/{Sid}/Messages.json`, form-encoded `To`
///   (+E.164), `From` or `MessagingServiceSid`, `Body`, and with a public URL
///   `StatusCallback`; 201 with the message's `sid`.
/// - `POST /2010-04-01/Accounts/{Sid}/Calls.json` with `To`, `From` and
///   `Twiml`: a `<Say>` in the message's language; 201 with the call's `sid`.
///
/// Errors come as JSON with Twilio's `code` (21211 invalid `To`, 20429 too
/// many requests, 20005 account not active…): 429 and 5xx are worth
/// retrying, other 4xx are refusals.
package struct TwilioSender: MessageSender {
    let account: ProviderAccount
    let http: ProviderHTTP
    let callbackBase: URL?

    package init(_ account: ProviderAccount, callbackBase: URL?, caFile: String? = nil) {
        precondition(account.kind == .twilio)
        self.account = account
        self.callbackBase = callbackBase
        http = ProviderHTTP(caFile: caFile)
    }

    package var channels: Set<Channel> { account.channels }
    package var longestSend: Double { Double(http.timeout) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        var fields = [("To", "+" + message.to)]
        let resource: String
        switch message.channel {
        case .sms:
            resource = "Messages.json"
            if let service = account.messagingServiceSID {
                fields.append(("MessagingServiceSid", service))
            } else {
                fields.append(("From", account.from))
            }
            fields.append(("Body", message.text))
        case .voice:
            guard let from = account.voiceFrom else {
                throw DeliveryError(reason: "twilio: from= is not a number, so no calls", retryable: false)
            }
            resource = "Calls.json"
            fields += [
                ("From", from),
                ("Twiml", Self.twiml(message.text, language: MessageCatalog.voiceTag(for: message.locale))),
            ]
        case .email, .logout, .cibaPing:
            throw DeliveryError(reason: "twilio: no \(message.channel.rawValue)", retryable: false)
        }
        if let callbackBase {
            fields.append(("StatusCallback", callbackBase.appendingPathComponent("v1/delivery/twilio").absoluteString))
        }
        let url = (account.apiBase ?? URL(string: "https://api.twilio.com")!)
            .appendingPathComponent("2010-04-01/Accounts/\(account.key)/\(resource)")
        let provider = "twilio \(message.channel.rawValue)"
        let answer = try http.post(
            url, contentType: "application/x-www-form-urlencoded", body: ProviderHTTP.form(fields),
            basic: (account.key, account.secret), provider: provider)
        guard answer.status == 201 || answer.status == 200 else { throw VonageSender.httpFailure(provider, answer) }
        return Delivery(provider: "twilio", reference: answer.json["sid"] as? String)
    }

    /// `<Response><Say language="…">text</Say></Response>`, the text escaped for XML.
    static func twiml(_ text: String, language: String) -> String {
        let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        return
            #"<?xml version="1.0" encoding="UTF-8"?><Response><Say language="\#(language)">\#(escaped)</Say></Response>"#
    }
}
