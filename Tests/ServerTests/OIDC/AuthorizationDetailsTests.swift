import API
import Foundation
import JOSE
import Testing

@testable import TrifactorServer

/// RFC 9396 authorization details as a request carries them: a payment checked field by field, an operator's type
/// by its schema, and the hash the second factor is bound to.
@Suite struct AuthorizationDetailsTests {
    static func payment(
        amount: String = "250.00", currency: String = "EUR", iban: String = "DE89 3704 0044 0532 0130 00",
        extra: String = ""
    ) -> String {
        """
        [{"type":"payment_initiation","instructedAmount":{"currency":"\(currency)","amount":"\(amount)"},\
        "creditorName":"Erika Mustermann","creditorAccount":{"iban":"\(iban)"}\(extra)}]
        """
    }

    static func refusal(_ text: String, schemas: [String: DetailsSchema] = [:]) -> String? {
        do {
            _ = try AuthorizationDetails.parse(text, schemas: schemas)
            return nil
        } catch {
            #expect(error.code == "invalid_authorization_details")
            return error.description
        }
    }

    @Test("a payment is read with its IBAN normalised, and its action names amount, payee and the details' hash")
    func payment() throws {
        let details = try AuthorizationDetails.parse(
            Self.payment(extra: #","remittanceInformationUnstructured":"Invoice 42""#))
        let p = try #require(details.payment)
        #expect(p.creditorIBAN == "DE89370400440532013000")
        #expect(p.remittance == "Invoice 42")
        let action = details.action(client: "bank")
        #expect(action["amount"] == .string("250.00"))
        #expect(action["payee"] == .string("Erika Mustermann"))
        #expect(action["details"] == .string(details.hash))
        // Bound to its client: another client's approval of the same payment is another action.
        #expect(action != details.action(client: "other"))
        #expect(IBAN.grouped(p.creditorIBAN) == "DE89 3704 0044 0532 0130 00")
    }

    @Test("the hash ignores the order of members but not a changed byte")
    func hash() throws {
        let a = try AuthorizationDetails.parse(Self.payment())
        let reordered = try AuthorizationDetails.parse(
            """
            [{"creditorAccount":{"iban":"DE89 3704 0044 0532 0130 00"},"creditorName":"Erika Mustermann",\
            "instructedAmount":{"amount":"250.00","currency":"EUR"},"type":"payment_initiation"}]
            """)
        #expect(a.hash == reordered.hash)
        #expect(a.hash != (try AuthorizationDetails.parse(Self.payment(amount: "250.01"))).hash)
    }

    @Test("amounts follow the currency's minor units; IBANs their check digits; unknown members and types are refused")
    func refusals() {
        #expect(Self.refusal(Self.payment(amount: "1000", currency: "JPY")) == nil)
        #expect(Self.refusal(Self.payment(amount: "1000.5", currency: "JPY"))?.contains("0 decimal places") == true)
        #expect(Self.refusal(Self.payment(amount: "1.234", currency: "KWD")) == nil)
        #expect(Self.refusal(Self.payment(amount: "1.234")) != nil)
        for bad in ["0.00", "-5.00", "1e3", "05.00", "", "1.", ".5", "1234567890123.00"] {
            #expect(Self.refusal(Self.payment(amount: bad)) != nil, "amount \(bad)")
        }
        #expect(Self.refusal(Self.payment(currency: "XXX")) != nil)
        #expect(Self.refusal(Self.payment(currency: "eur")) != nil)
        #expect(Self.refusal(Self.payment(iban: "DE88 3704 0044 0532 0130 00"))?.contains("IBAN") == true)
        #expect(Self.refusal(Self.payment(extra: #","bic":"COBADEFFXXX""#))?.contains("bic") == true)
        #expect(Self.refusal(#"[{"type":"account_information"}]"#)?.contains("does not know") == true)
        // A bidi override or a zero-width character would make the payee read as another.
        let spoofed = Self.payment().replacingOccurrences(of: "Erika Mustermann", with: "Erika\u{202E}nnamretsuM")
        #expect(Self.refusal(spoofed) != nil)
        // Anywhere in the details, member names too: every one of them is shown to the user.
        #expect(Self.refusal(Self.payment(extra: #","identifier":"order\u200B42""#)) != nil)
        #expect(Self.refusal(Self.payment(extra: #","identifier":"order-42","datatypes":["balances"]"#)) == nil)
        #expect(Self.refusal("{}") != nil)
        #expect(Self.refusal("[]") != nil)
        #expect(Self.refusal(#"[{"type":"payment_initiation","type":"x"}]"#) != nil)
        let two = Self.payment().dropLast() + "," + Self.payment().dropFirst()
        #expect(Self.refusal(String(two))?.contains("one payment_initiation") == true)
    }

    @Test("an operator's type is checked by its schema, and its failure names the member")
    func operatorType() throws {
        let schema = try DetailsSchema(
            json: [
                "type": "object", "required": ["type", "accounts"], "additionalProperties": false,
                "properties": [
                    "type": ["const": "account_information"],
                    "accounts": ["type": "array", "minItems": 1, "items": ["type": "string"]],
                ],
            ])
        let schemas = ["account_information": schema]
        #expect(Self.refusal(#"[{"type":"account_information","accounts":["a"]}]"#, schemas: schemas) == nil)
        let refused = Self.refusal(#"[{"type":"account_information","accounts":[]}]"#, schemas: schemas)
        #expect(refused?.hasPrefix("authorization_details[0]/accounts") == true)
    }
}
