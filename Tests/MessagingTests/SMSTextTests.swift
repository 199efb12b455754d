import Messaging
import Testing

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
}
