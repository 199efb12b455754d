import API
import Foundation
import Messaging

/// What a code confirms, for the words of the message that carries it.
enum CodeIntent: Sendable, Equatable {
    /// Sign-in, enrollment, step-up: just the code.
    case code
    /// A bound transfer: its amount, currency and payee are said.
    case transfer(amount: String, currency: String, payee: String)
    /// Another bound action, named by its type.
    case action(String)

    /// The intent of a bound action.
    static func bound(_ action: [String: JSONScalar]) -> CodeIntent {
        let type = action["type"]?.text ?? "action"
        if type == "transfer", let amount = action["amount"]?.text, let payee = action["payee"]?.text {
            return .transfer(amount: amount, currency: action["currency"]?.text ?? "", payee: payee)
        }
        return .action(type.replacingOccurrences(of: "_", with: " "))
    }
}

/// Every message Trifactor sends, from the catalog's templates: codes by SMS
/// (one segment when it can be: optional sentences go first, never the code
/// nor a bound action's words) and by voice (digits one by one, the code said
/// twice), and emails with their subjects.
struct MessageTexts: Sendable {
    let catalog: MessageCatalog
    let brand: String
    /// The most segments a text may take before its optional sentences go (`TRIFACTOR_SMS_MAX_SEGMENTS`).
    var maxSegments = 1

    /// The language for a message: the request's locale, else the user's, else the fallback.
    func language(locale: String?, user: String? = nil) -> String {
        catalog.language(of: locale) ?? catalog.language(of: user) ?? catalog.fallback
    }

    /// The locale of a message to a user (`de-de`), for a voice to speak in: theirs, or the fallback language's voice.
    func locale(user: String?) -> String {
        catalog.language(of: user) != nil
            ? user!.lowercased() : (catalog.languages[catalog.fallback]?.voice.lowercased() ?? "en-us")
    }

    /// The text of a code sent by `channel`.
    func code(
        _ channel: Channel, brand: String? = nil, code: String, minutes: Int, intent: CodeIntent, language: String
    ) -> String {
        let brand = brand ?? self.brand
        let spoken = channel == .voice ? code.map(String.init).joined(separator: ", ") : code
        var values: [String: MessageCatalog.Value] = [
            "brand": .text(brand), "code": .text(spoken), "minutes": .number(minutes),
        ]
        let key: String
        switch intent {
        case .code: key = "code"
        case .transfer(let amount, let currency, let payee):
            key = "transfer"
            values["amount"] = .amount(amount, currency: currency)
            values["payee"] = .text(payee)
        case .action(let action):
            key = "action"
            values["action"] = .text(action)
        }
        switch channel {
        case .voice:
            return catalog.render("voice.\(key)", language: language, values) + " "
                + catalog.render("voice.validity", language: language, values)
        default:
            // GSM-7 has no no-break spaces: a formatted amount keeps one segment and its readability with plain ones.
            let plain = { (text: String) in
                text.replacingOccurrences(of: "\u{00A0}", with: " ").replacingOccurrences(of: "\u{202F}", with: " ")
            }
            return SMSText.fit(
                required: [plain(catalog.render("sms.\(key)", language: language, values))],
                optional: [
                    plain(catalog.render("sms.validity", language: language, values)),
                    catalog.render("sms.warning", language: language, values),
                ],
                maxSegments: maxSegments)
        }
    }

    /// The text that brings an app's back-channel request (OpenID CIBA) to a user without a device: the app, its
    /// binding message and the link to the approval page. The link is required, like a code; the validity and the
    /// warning go first when the text runs long.
    func backchannelLink(client: String, message: String?, link: String, minutes: Int, language: String) -> String {
        var values: [String: MessageCatalog.Value] = [
            "brand": .text(brand), "client": .text(client), "link": .text(link), "minutes": .number(minutes),
        ]
        if let message { values["message"] = .text(message) }
        let plain = { (text: String) in
            text.replacingOccurrences(of: "\u{00A0}", with: " ").replacingOccurrences(of: "\u{202F}", with: " ")
        }
        return SMSText.fit(
            required: [catalog.render(message == nil ? "sms.ciba" : "sms.ciba.message", language: language, values)],
            optional: [
                plain(catalog.render("sms.validity", language: language, values)),
                catalog.render("sms.ciba.warning", language: language, values),
            ],
            maxSegments: maxSegments)
    }

    /// An email's subject and body.
    func email(_ key: String, language: String, _ values: [String: MessageCatalog.Value]) -> (
        subject: String, body: String
    ) {
        var values = values
        values["brand"] = values["brand"] ?? .text(brand)
        return (
            catalog.render("email.\(key).subject", language: language, values),
            catalog.render("email.\(key).body", language: language, values)
        )
    }
}
