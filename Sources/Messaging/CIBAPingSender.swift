import Foundation

/// Pings CIBA clients (CIBA Core §10.2): a JSON `{"auth_req_id": …}` posted to the client's notification endpoint with
/// `Authorization: Bearer <client_notification_token>`. The message's text is `{"auth_req_id": …, "token": …}`, kept
/// held in the outbox from the request until the user decides. A 2xx is delivered; a 4xx is the client refusing it,
/// not retried; anything else is tried again by the outbox.
package struct CIBAPingSender: MessageSender {
    var http = ProviderHTTP(timeout: 10)

    package init() {}

    package var channels: Set<Channel> { [.cibaPing] }
    package var longestSend: Double { Double(http.timeout) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard message.channel == .cibaPing, let url = URL(string: message.to),
            url.scheme == "https" || url.scheme == "http",
            let fields = try? JSONDecoder().decode([String: String].self, from: Data(message.text.utf8)),
            let id = fields["auth_req_id"], let token = fields["token"],
            let body = try? JSONEncoder().encode(["auth_req_id": id])
        else { throw DeliveryError(reason: "ciba ping: not a ping to an http(s) URI", retryable: false) }
        let answer = try http.post(
            url, contentType: "application/json", body: body, headers: ["Authorization: Bearer \(token)"],
            provider: "ciba ping")
        switch answer.status {
        case 200..<300: return Delivery(provider: "ciba")
        case 400..<500:
            throw DeliveryError(reason: "ciba ping: the client refused it (\(answer.status))", retryable: false)
        default: throw DeliveryError(reason: "ciba ping: HTTP \(answer.status)", retryable: true)
        }
    }
}
