import Foundation

/// Posts OpenID Connect back-channel logout tokens (Back-Channel Logout 1.0
/// §2.5): `logout_token=<JWT>` as a form to the relying party's registered
/// URI. A 2xx is delivered; a 400 is the relying party refusing the token
/// (§2.8), not retried; anything else (5xx, no answer) is tried again by the
/// outbox, whose lease outlives the 10-second timeout.
package struct BackchannelLogoutSender: MessageSender {
    var http = ProviderHTTP(timeout: 10)

    package init() {}

    package var channels: Set<Channel> { [.logout] }
    package var longestSend: Double { Double(http.timeout) }

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard message.channel == .logout, let url = URL(string: message.to),
            url.scheme == "https" || url.scheme == "http"
        else { throw DeliveryError(reason: "backchannel logout: not an http(s) URI", retryable: false) }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = "logout_token=" + (message.text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        let answer = try http.post(
            url, contentType: "application/x-www-form-urlencoded", body: Data(body.utf8), provider: "backchannel logout"
        )
        switch answer.status {
        case 200..<300: return Delivery(provider: "backchannel")
        case 400:
            throw DeliveryError(reason: "backchannel logout: the relying party refused it (400)", retryable: false)
        default: throw DeliveryError(reason: "backchannel logout: HTTP \(answer.status)", retryable: true)
        }
    }
}
