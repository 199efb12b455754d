import Messaging
import Testing
@testable import TrifactorServer

@Suite("SMS length")
struct SMSTextTests {
    @Test("GSM-7 counts 160 in one segment and 153 per part; its extension characters count twice")
    func gsm7() {
        #expect(SMSText.segments(String(repeating: "a", count: 160)) == (.gsm7, 1))
        #expect(SMSText.segments(String(repeating: "a", count: 161)) == (.gsm7, 2))
        #expect(SMSText.segments(String(repeating: "a", count: 306)) == (.gsm7, 2))
        #expect(SMSText.segments(String(repeating: "a", count: 307)) == (.gsm7, 3))
        #expect(SMSText.segments(String(repeating: "€", count: 80)) == (.gsm7, 1))
        #expect(SMSText.segments(String(repeating: "€", count: 81)) == (.gsm7, 2))
        #expect(SMSText.segments("Ünö? ÄÖÑÜäöñüà èé €").encoding == .gsm7)
    }

    @Test("anything outside GSM-7 makes the whole text UCS-2: 70 units in one segment, 67 per part")
    func ucs2() {
        #expect(SMSText.segments("Ваш код 123456") == (.ucs2, 1))
        #expect(SMSText.segments(String(repeating: "ж", count: 70)) == (.ucs2, 1))
        #expect(SMSText.segments(String(repeating: "ж", count: 71)) == (.ucs2, 2))
        #expect(SMSText.segments(String(repeating: "😀", count: 35)) == (.ucs2, 1))  // two UTF-16 units each
        #expect(SMSText.segments("ç").encoding == .ucs2)  // lower-case ç is not in GSM-7's basic table
    }

    @Test("a text over the limit loses its optional words first, never the code")
    func fitting() {
        let code = "Acme: Confirm transfer of EUR 250.00 to \(String(repeating: "Alice Example ", count: 8))code 123456."
        let fitted = SMSText.fit(required: [code], optional: ["It is valid for 10 minutes."], maxSegments: 1)
        #expect(fitted == code)
        #expect(SMSText.fit(required: ["Acme: your verification code is 1234."], optional: ["It is valid for 10 minutes."], maxSegments: 1)
            == "Acme: your verification code is 1234. It is valid for 10 minutes.")
        // The server's bound-action text keeps amount, payee and code when it has to shorten.
        let texts = MessageTexts(catalog: .bundled, brand: "Trifactor")
        let text = texts.code(.sms, code: "123456", minutes: 5,
                              intent: .transfer(amount: "250.00", currency: "EUR", payee: String(repeating: "Very Long Payee Name ", count: 4)), language: "en")
        #expect(text.contains("€250.00") && text.contains("123456") && !text.contains("Valid for"), "\(text)")
        #expect(SMSText.segments(text).count == 1)
    }
}
