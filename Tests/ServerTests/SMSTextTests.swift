import Messaging
import Testing

@testable import TrifactorServer

@Suite("SMS length")
struct SMSTextTests {
    @Test("a text over the limit loses its optional words first, never the code")
    func fitting() {
        let code =
            "Acme: Confirm transfer of EUR 250.00 to \(String(repeating: "Alice Example ", count: 8))code 123456."
        let fitted = SMSText.fit(required: [code], optional: ["It is valid for 10 minutes."], maxSegments: 1)
        #expect(fitted == code)
        #expect(
            SMSText.fit(
                required: ["Acme: your verification code is 1234."], optional: ["It is valid for 10 minutes."],
                maxSegments: 1)
                == "Acme: your verification code is 1234. It is valid for 10 minutes.")
        // The server's bound-action text keeps amount, payee and code when it has to shorten.
        let texts = MessageTexts(catalog: .bundled, brand: "Trifactor")
        let text = texts.code(
            .sms, code: "123456", minutes: 5,
            intent: .transfer(
                amount: "250.00", currency: "EUR", payee: String(repeating: "Very Long Payee Name ", count: 4)),
            language: "en")
        #expect(text.contains("€250.00") && text.contains("123456") && !text.contains("Valid for"), "\(text)")
        #expect(SMSText.segments(text).count == 1)
    }
}
