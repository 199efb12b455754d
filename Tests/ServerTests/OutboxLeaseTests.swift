import Core
import Foundation
import Logging
import Messaging
import MessagingTestSupport
import Store
import Testing

@testable import TrifactorServer

@Suite("The outbox lease")
struct OutboxLeaseTests {
    @Test(
        "a claimed message stays the dispatcher's for longer than its senders can take: two providers' timeouts in a row, plus 15 s"
    )
    func leaseOutlastsTheSlowestSend() throws {
        let vonage = try VonageSender(
            try ProviderFixtures.parse("vonage://k@?from=Acme&secret_file=/s"), callbackBase: nil)
        let twilio = TwilioSender(
            try ProviderFixtures.parse("twilio://AC1@?from=Acme&token_file=/t"), callbackBase: nil)
        let failover = FailoverSender([vonage, twilio])
        #expect(vonage.longestSend == 15 && failover.longestSend == 30)
        let database = try openDatabase(
            url: "sqlite:"
                + FileManager.default.temporaryDirectory.appendingPathComponent("lease-\(UUID().uuidString).db").path,
            poolSize: 1)
        let transactions = Transactions(database: database, logger: Logger { _ in })
        func lease(_ sender: any MessageSender) -> Int64 {
            OutboxDispatcher(transactions: transactions, clock: .system, sender: sender, keepsDelivered: false) {
                _, _ in
            }.leaseMillis
        }
        #expect(lease(RoutingSender([failover])) == 45_000)
        #expect(lease(RoutingSender([DevPhoneSender { _ in }])) == 30_000)
        #expect(lease(FailoverSender([failover, vonage, twilio])) == 75_000)
    }
}
