import Foundation
import Messaging
import MessagingTestSupport
import Testing

@Suite("SMS and voice provider settings")
struct ProviderSettingsTests {
    static func parse(_ text: String) throws(ProviderAccount.Invalid) -> ProviderAccount {
        try ProviderFixtures.parse(text)
    }
    static func refusal(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch { return error.description }
    }

    @Test("a Vonage or Twilio account reads from its URL, secrets from files, the real hosts by default")
    func accounts() throws {
        let vonage = try Self.parse("vonage://abc123@?from=Trifactor&secret_file=/s")
        #expect(vonage.kind == .vonage && vonage.key == "abc123" && vonage.from == "Trifactor" && vonage.apiBase == nil)
        #expect(vonage.channels == [.sms] && !vonage.description.contains("secret"))
        let twilio = try Self.parse("twilio://AC123@?from=%2B15005550006&token_file=/t")
        #expect(twilio.channels == [.sms, .voice] && twilio.callbackSecret == "token")
        let local = try Self.parse("twilio://AC123@127.0.0.1:9000?from=Acme&token_file=/t")
        #expect(local.apiBase?.absoluteString == "http://127.0.0.1:9000" && local.channels == [.sms])
        #expect(
            try Self.parse("vonage://k@gateway.example.com?from=Acme&secret_file=/s").apiBase?.absoluteString
                == "https://gateway.example.com")
    }

    @Test("a setting that cannot work is refused with a sentence that says why, and never echoes a secret")
    func refusals() {
        #expect(Self.refusal("sinch://k@?from=A&secret_file=/s")?.contains("vonage:// or twilio://") == true)
        #expect(
            Self.refusal("vonage://k:hunter2@?from=A&secret_file=/s").map {
                $0.contains("file") && !$0.contains("hunter2")
            } == true)
        #expect(Self.refusal("vonage://k@?from=A")?.contains("secret_file=PATH is required") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/missing")?.contains("cannot be read") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/empty")?.contains("cannot be read or is empty") == true)
        #expect(
            Self.refusal("vonage://k@?from=A&secret_file=/s&colour=red")?.contains("unknown parameter colour") == true)
        #expect(
            Self.refusal("vonage://k@?from=Far%20too%20long%20a%20sender&secret_file=/s")?.contains("from=") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/s&application_id=abcd")?.contains("together") == true)
        #expect(Self.refusal("twilio://AC1@?token_file=/t")?.contains("messaging_service_sid") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/s&from=B")?.contains("twice") == true)
    }

    @Test(
        "Twilio's signature is HMAC-SHA1 over the URL and the sorted parameters, in base64 (Twilio's documented example)"
    )
    func twilioVector() throws {
        // The example of Twilio's security documentation: token 12345, this URL and these parameters.
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2"
        let parameters = [
            ("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"), ("From", "+12349013030"),
            ("To", "+18005551212"),
        ]
        #expect(
            ProviderCallbacks.twilioSignature(url: url, parameters: parameters, token: "12345")
                == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        #expect(throws: ProviderCallbacks.Refusal.badSignature) {
            try ProviderCallbacks.checkTwilioSignature(
                "RSOYDt4T1cUTdK1PDd93/VVr8B8=", url: url, parameters: parameters, token: "12345")
        }
    }
}
