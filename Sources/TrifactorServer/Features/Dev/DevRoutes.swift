import API
import Core
import Foundation
import HTTP

/// `GET /dev/outbox[?to=ADDRESS]`: the messages Trifactor would have sent,
/// newest first. Registered only in dev mode, so it answers 404 otherwise.
struct DevRoutes {
    let env: Environment

    func register(on router: inout Router) {
        guard env.configuration.dev else { return }
        router.add("GET", "/dev/outbox") { request in
            var recipient = request.query["to"]?.trimmingCharacters(in: .whitespaces)
            if let r = recipient, let email = EmailAddress(r) { recipient = email.value }
            if recipient?.isEmpty == true { recipient = nil }
            let messages = try env.read { try Outbox(env: env).list(to: recipient, limit: 100, on: $0) }
            return .json(OutboxListing(messages: messages.map {
                OutboxMessage(id: $0.id, channel: $0.channel, to: $0.to, text: $0.text, createdAt: Date(millis: $0.createdAt), status: $0.status)
            }))
        }
    }
}
