import API
import Core
import Crypto
import Foundation
import JOSE

/// RFC 9396 rich authorization requests: `authorization_details`, checked whole when the request arrives. A
/// `payment_initiation` (the type of RFC 9396's own example and of open banking) is checked field by field; another
/// type must be one the operator registered with a JSON Schema. The details are kept in their canonical form (compact,
/// members sorted), whose SHA-256 the second factor is bound to: a changed byte is another payment.
struct AuthorizationDetails: Sendable, Equatable, Codable {
    /// The details as the client sent them (each object checked), in the order sent.
    let items: [JSONValue]
    /// The one payment among them, if any.
    let payment: Payment?

    /// The most objects one request may carry.
    static let maxItems = 5
    /// The type every deployment knows.
    static let paymentType = "payment_initiation"

    /// A payment, as the consent page states it and the second factor's messages say it.
    struct Payment: Sendable, Equatable, Codable {
        /// A decimal string with the currency's minor units at most ("250.00", "1000" for JPY).
        let amount: String
        /// ISO 4217, upper case.
        let currency: String
        let creditorName: String
        /// Upper case, without spaces.
        let creditorIBAN: String
        let debtorIBAN: String?
        let remittance: String?
    }

    /// The canonical JSON of the details (`{"authorization_details":[…]}` compact with members sorted).
    var canonical: [UInt8] { JSONValue.serialize(["authorization_details": .array(items)]) }

    /// The SHA-256 of the canonical form, hex: what an approval is bound to.
    var hash: String { SHA256.hex(canonical) }

    /// The action the second factor is bound to: a transfer (so its code's text names amount and payee, as the bank's
    /// transfers do) that carries the hash of every detail and the client it is for, or those alone for other types.
    /// Another client, or the API's own bound actions, cannot spend it: their action differs.
    func action(client: String) -> [String: JSONScalar] {
        guard let p = payment else {
            return ["type": .string("authorization_details"), "details": .string(hash), "client": .string(client)]
        }
        // The account paid from and the reference too, so a device that shows the action shows all of a plain payment.
        var action: [String: JSONScalar] = [
            "type": .string("transfer"), "amount": .string(p.amount), "currency": .string(p.currency),
            "payee": .string(p.creditorName), "to": .string(p.creditorIBAN), "details": .string(hash),
            "client": .string(client),
        ]
        if let debtor = p.debtorIBAN { action["from"] = .string(debtor) }
        if let reference = p.remittance { action["reference"] = .string(reference) }
        return action
    }

    /// Whether the details are one payment and nothing else (no RFC 9396 common field, no other type): then its
    /// action states every detail, and a device that shows the action shows everything that is approved.
    var isPlainPayment: Bool {
        guard payment != nil, items.count == 1, let members = items.first?.object else { return false }
        let stated: Set<String> = [
            "type", "instructedAmount", "creditorName", "creditorAccount", "debtorAccount",
            "remittanceInformationUnstructured",
        ]
        return Set(members.keys).isSubset(of: stated)
    }

    /// Parses and checks the `authorization_details` parameter (RFC 9396 §2).
    /// - Parameter schemas: the operator's types, by name.
    /// - Throws: `invalid_authorization_details` naming the first fault (RFC 9396 §5).
    static func parse(_ text: String, schemas: [String: DetailsSchema] = [:]) throws(AuthorizationError)
        -> AuthorizationDetails
    {
        guard let array = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)),
            case .array(let items) = array, !DuplicateMembers.found(in: Array(text.utf8))
        else { throw .invalidDetails("authorization_details must be a JSON array of objects.") }
        guard (1...maxItems).contains(items.count) else {
            throw .invalidDetails("authorization_details must hold 1 to \(maxItems) objects.")
        }
        var payment: Payment?
        for (index, item) in items.enumerated() {
            guard case .object(let object) = item, case .string(let type)? = object["type"] else {
                throw .invalidDetails("authorization_details[\(index)] must be an object with a type.")
            }
            // Every name and text is shown to the user: none may hide or turn text around (bidi, zero-width).
            guard Self.isPlain(item) else {
                throw .invalidDetails(
                    "authorization_details[\(index)] holds a control or format character (such as a bidi override).")
            }
            if type == paymentType {
                guard payment == nil else {
                    throw .invalidDetails("A request may carry one payment_initiation: push one request per payment.")
                }
                payment = try Payment.parse(object, at: index)
            } else if let schema = schemas[type] {
                if let fault = schema.validate(item) {
                    throw .invalidDetails("authorization_details[\(index)]\(fault)")
                }
            } else {
                throw .invalidDetails("authorization_details[\(index)] has a type this server does not know.")
            }
        }
        return AuthorizationDetails(items: items, payment: payment)
    }
}

extension AuthorizationDetails {
    /// Whether every member name and string in `value` is free of control and format characters.
    static func isPlain(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): Payment.isPlain(text)
        case .array(let items): items.allSatisfy(isPlain)
        case .object(let members): members.allSatisfy { Payment.isPlain($0.key) && isPlain($0.value) }
        default: true
        }
    }
}

extension OAuthError {
    /// An authorization endpoint's refusal in the token endpoint's form (RFC 9126 §2.3: a push is answered so).
    init(_ error: AuthorizationError) { self.init(code: error.code, description: error.description) }
}

extension AuthorizationError {
    /// RFC 9396 §5.
    static func invalidDetails(_ description: String) -> Self {
        Self(code: "invalid_authorization_details", description: description)
    }
}

extension AuthorizationDetails.Payment {
    /// The members a `payment_initiation` may have: RFC 9396 §2.2's common fields and the payment's own.
    static let members: Set<String> = [
        "type", "actions", "locations", "datatypes", "identifier", "privileges", "instructedAmount", "creditorName",
        "creditorAccount", "debtorAccount", "remittanceInformationUnstructured",
    ]

    /// Checks one `payment_initiation` object: a positive amount in the currency's minor units, a creditor named and
    /// with an IBAN whose check digits hold, an optional debtor IBAN and remittance text of at most 140 characters.
    static func parse(_ o: [String: JSONValue], at index: Int) throws(AuthorizationError) -> Self {
        let at = "authorization_details[\(index)]"
        if let unknown = o.keys.sorted().first(where: { !members.contains($0) }) {
            // RFC 6749 §5.2: an error_description holds printable ASCII but `"` and `\`.
            let name = String(
                unknown.prefix(40).map { $0.isASCII && $0 != "\"" && $0 != "\\" && !$0.isWhitespace ? $0 : "?" })
            throw .invalidDetails("\(at).\(name) is not a member of payment_initiation.")
        }
        if let actions = o["actions"] {
            guard let list = actions.strings, !list.isEmpty,
                list.allSatisfy(["initiate", "status", "cancel"].contains)
            else { throw .invalidDetails("\(at).actions must list initiate, status or cancel.") }
        }
        if let locations = o["locations"] {
            guard let list = locations.strings, !list.isEmpty, list.count <= 5,
                list.allSatisfy({ URLComponents(string: $0)?.scheme == "https" && $0.utf8.count <= 512 })
            else { throw .invalidDetails("\(at).locations must list https URLs.") }
        }
        for name in ["datatypes", "privileges"] {
            if let value = o[name] {
                guard let list = value.strings, (1...10).contains(list.count), list.allSatisfy({ isText($0, max: 64) })
                else { throw .invalidDetails("\(at).\(name) must list 1 to 10 short strings.") }
            }
        }
        if let value = o["identifier"] {
            guard case .string(let text) = value, isText(text, max: 128) else {
                throw .invalidDetails("\(at).identifier must be 1 to 128 characters.")
            }
        }
        guard case .object(let amount)? = o["instructedAmount"], amount.count == 2,
            case .string(let currency)? = amount["currency"], case .string(let value)? = amount["amount"]
        else {
            throw .invalidDetails(
                "\(at).instructedAmount must be {\"currency\": \"EUR\", \"amount\": \"250.00\"}, the amount a string.")
        }
        guard let exponent = Currency.minorUnits(currency) else {
            throw .invalidDetails("\(at).instructedAmount.currency must be an ISO 4217 code such as EUR.")
        }
        guard Currency.isAmount(value, minorUnits: exponent) else {
            throw .invalidDetails(
                "\(at).instructedAmount.amount must be a positive decimal with at most \(exponent) decimal places in \(currency)."
            )
        }
        guard case .string(let name)? = o["creditorName"], Self.isText(name, max: 70) else {
            throw .invalidDetails("\(at).creditorName must be 1 to 70 characters without control characters.")
        }
        guard let creditor = Self.iban(o["creditorAccount"]) else {
            throw .invalidDetails("\(at).creditorAccount must be {\"iban\": …} with a valid IBAN (ISO 13616).")
        }
        var debtor: String?
        if let account = o["debtorAccount"] {
            guard let iban = Self.iban(account) else {
                throw .invalidDetails("\(at).debtorAccount must be {\"iban\": …} with a valid IBAN (ISO 13616).")
            }
            debtor = iban
        }
        var remittance: String?
        if let text = o["remittanceInformationUnstructured"] {
            guard case .string(let line) = text, Self.isText(line, max: 140) else {
                throw .invalidDetails("\(at).remittanceInformationUnstructured must be 1 to 140 characters.")
            }
            remittance = line
        }
        return Self(
            amount: value, currency: currency, creditorName: name, creditorIBAN: creditor, debtorIBAN: debtor,
            remittance: remittance)
    }

    /// `{"iban": "…"}` with a valid IBAN, the IBAN upper case without spaces; nil otherwise.
    private static func iban(_ value: JSONValue?) -> String? {
        guard case .object(let account)? = value, account.count == 1, case .string(let text)? = account["iban"] else {
            return nil
        }
        return IBAN.normalized(text)
    }

    private static func isText(_ text: String, max: Int) -> Bool {
        (1...max).contains(text.count) && text.trimmingCharacters(in: .whitespaces) == text && Self.isPlain(text)
    }

    /// No control or format characters: a bidi override or a zero-width character would make a payee read as
    /// another on the page, in the text and on the device.
    static func isPlain(_ text: String) -> Bool {
        !text.unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) }
    }
}

/// ISO 13616 International Bank Account Numbers.
enum IBAN {
    /// The IBAN upper case without spaces when its form and ISO 7064 MOD 97-10 check digits hold; nil otherwise.
    static func normalized(_ text: String) -> String? {
        let compact = text.uppercased().filter { $0 != " " }
        let bytes = Array(compact.utf8)
        guard (15...34).contains(bytes.count), bytes.allSatisfy({ isDigit($0) || isLetter($0) }),
            isLetter(bytes[0]), isLetter(bytes[1]), isDigit(bytes[2]), isDigit(bytes[3])
        else { return nil }
        // The first four characters move to the end; letters count as 10…35; the number mod 97 must be 1.
        var remainder = 0
        for byte in bytes[4...] + bytes[..<4] {
            let value = isDigit(byte) ? Int(byte - 48) : Int(byte - 55)
            remainder = (value < 10 ? remainder * 10 + value : remainder * 100 + value) % 97
        }
        return remainder == 1 ? compact : nil
    }

    /// "DE89 3704 0044 0532 0130 00": in groups of four, as printed.
    static func grouped(_ iban: String) -> String {
        stride(from: 0, to: iban.count, by: 4).map { i in
            let start = iban.index(iban.startIndex, offsetBy: i)
            return String(iban[start..<(iban.index(start, offsetBy: 4, limitedBy: iban.endIndex) ?? iban.endIndex)])
        }.joined(separator: " ")
    }

    private static func isDigit(_ b: UInt8) -> Bool { (48...57).contains(b) }
    private static func isLetter(_ b: UInt8) -> Bool { (65...90).contains(b) }
}

/// ISO 4217 currencies' minor units: two, but for the codes listed (the standard's table, for active codes).
enum Currency {
    static let noMinorUnits: Set<String> = [
        "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF",
        "XOF", "XPF",
    ]
    static let threeMinorUnits: Set<String> = ["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"]
    /// Codes that name no money to pay with: funds, metals, testing and "no currency".
    static let notMoney: Set<String> = [
        "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX", "BOV", "CHE", "CHW",
        "CLF", "COU", "MXV", "USN", "UYW",
    ]

    /// The minor units of `code`, or nil when it is no ISO 4217 currency to pay in.
    static func minorUnits(_ code: String) -> Int? {
        guard code.utf8.count == 3, code.utf8.allSatisfy({ (65...90).contains($0) }), !notMoney.contains(code),
            Locale.commonISOCurrencyCodes.contains(code)
        else { return nil }
        if noMinorUnits.contains(code) { return 0 }
        if threeMinorUnits.contains(code) { return 3 }
        return 2
    }

    /// A positive decimal: 1 to 12 digits without a leading zero (but "0.50"), then at most `minorUnits` decimals.
    static func isAmount(_ text: String, minorUnits: Int) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, (1...12).contains(whole.count),
            whole.utf8.allSatisfy({ (48...57).contains($0) }), whole == "0" || !whole.hasPrefix("0")
        else { return false }
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.count <= minorUnits, fraction.utf8.allSatisfy({ (48...57).contains($0) })
            else { return false }
        }
        return text.contains(where: { $0 != "0" && $0 != "." })
    }
}

extension DetailsSchema {
    /// The most types an operator may register.
    static let maxTypes = 20

    /// The schemas of a folder: each `TYPE.json` (TYPE of 1 to 64 `[a-z0-9_.:-]`, not `payment_initiation`) is the
    /// JSON Schema of that `authorization_details` type; other files are not read.
    static func load(folder: String) -> Result<[String: DetailsSchema], Invalid> {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            return .failure(Invalid(sentence: "\(folder) is not a folder this server can read."))
        }
        var schemas: [String: DetailsSchema] = [:]
        for name in names.sorted() where name.hasSuffix(".json") {
            let type = String(name.dropLast(5))
            let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_.:-")
            guard (1...64).contains(type.count), type.allSatisfy(allowed.contains),
                type != AuthorizationDetails.paymentType
            else {
                return .failure(
                    Invalid(
                        sentence:
                            "\(name) does not name a type: use 1 to 64 of a-z, 0-9, _ . : - (payment_initiation is built in)."
                    ))
            }
            let path = (folder as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path), data.count <= 64 * 1024,
                let json = try? JSONDecoder().decode(JSONValue.self, from: data)
            else { return .failure(Invalid(sentence: "\(path) is not a JSON file of at most 64 KiB.")) }
            do {
                schemas[type] = try DetailsSchema(json: json)
            } catch {
                return .failure(Invalid(sentence: "\(path): \(error.sentence)"))
            }
        }
        guard schemas.count <= maxTypes else {
            return .failure(Invalid(sentence: "\(folder) holds more than \(maxTypes) types."))
        }
        return .success(schemas)
    }
}
