import Foundation
import Messaging
import Logging
import Store
import Testing
@testable import TrifactorServer
import Core

@Suite("SMS and voice provider settings")
struct ProviderSettingsTests {
    static let files = ["/s": "secret\n", "/t": "token", "/empty": "\n"]
    static func parse(_ text: String) throws(ProviderAccount.Invalid) -> ProviderAccount {
        try ProviderAccount.parse(text, readFile: { files[$0] })
    }
    static func refusal(_ text: String) -> String? {
        do { _ = try parse(text); return nil } catch { return error.description }
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
        #expect(try Self.parse("vonage://k@gateway.example.com?from=Acme&secret_file=/s").apiBase?.absoluteString == "https://gateway.example.com")
    }

    @Test("a setting that cannot work is refused with a sentence that says why, and never echoes a secret")
    func refusals() {
        #expect(Self.refusal("sinch://k@?from=A&secret_file=/s")?.contains("vonage:// or twilio://") == true)
        #expect(Self.refusal("vonage://k:hunter2@?from=A&secret_file=/s").map { $0.contains("file") && !$0.contains("hunter2") } == true)
        #expect(Self.refusal("vonage://k@?from=A")?.contains("secret_file=PATH is required") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/missing")?.contains("cannot be read") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/empty")?.contains("cannot be read or is empty") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/s&colour=red")?.contains("unknown parameter colour") == true)
        #expect(Self.refusal("vonage://k@?from=Far%20too%20long%20a%20sender&secret_file=/s")?.contains("from=") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/s&application_id=abcd")?.contains("together") == true)
        #expect(Self.refusal("twilio://AC1@?token_file=/t")?.contains("messaging_service_sid") == true)
        #expect(Self.refusal("vonage://k@?from=A&secret_file=/s&from=B")?.contains("twice") == true)
    }

    @Test("Twilio's signature is HMAC-SHA1 over the URL and the sorted parameters, in base64 (Twilio's documented example)")
    func twilioVector() throws {
        // The example of Twilio's security documentation: token 12345, this URL and these parameters.
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2"
        let parameters = [("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"), ("From", "+12349013030"),
                          ("To", "+18005551212")]
        #expect(ProviderCallbacks.twilioSignature(url: url, parameters: parameters, token: "12345") == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        #expect(throws: ProviderCallbacks.Refusal.badSignature) {
            try ProviderCallbacks.checkTwilioSignature("RSOYDt4T1cUTdK1PDd93/VVr8B8=", url: url, parameters: parameters, token: "12345")
        }
    }
}

@Suite("The outbox lease")
struct OutboxLeaseTests {
    @Test("a claimed message stays the dispatcher's for longer than its senders can take: two providers' timeouts in a row, plus 15 s")
    func leaseOutlastsTheSlowestSend() throws {
        let vonage = try VonageSender(try ProviderSettingsTests.parse("vonage://k@?from=Acme&secret_file=/s"), callbackBase: nil)
        let twilio = TwilioSender(try ProviderSettingsTests.parse("twilio://AC1@?from=Acme&token_file=/t"), callbackBase: nil)
        let failover = FailoverSender([vonage, twilio])
        #expect(vonage.longestSend == 15 && failover.longestSend == 30)
        let database = try openDatabase(url: "sqlite:" + FileManager.default.temporaryDirectory.appendingPathComponent("lease-\(UUID().uuidString).db").path, poolSize: 1)
        let transactions = Transactions(database: database, logger: Logger { _ in })
        func lease(_ sender: any MessageSender) -> Int64 {
            OutboxDispatcher(transactions: transactions, clock: .system, sender: sender, keepsDelivered: false) { _, _ in }.leaseMillis
        }
        #expect(lease(RoutingSender([failover])) == 45_000)
        #expect(lease(RoutingSender([DevPhoneSender { _ in }])) == 30_000)
        #expect(lease(FailoverSender([failover, vonage, twilio])) == 75_000)
    }
}
