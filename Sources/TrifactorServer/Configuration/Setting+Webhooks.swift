import Foundation

/// Webhooks: what their endpoints may be, and how long a failing one is retried.
extension Setting {
    static let webhooks: [Setting] = [
        bool(
            "TRIFACTOR_WEBHOOKS_ALLOW_PRIVATE", "--webhooks-allow-private",
            "Let webhook endpoints be loopback, private, link-local or metadata addresses (and plain http to loopback, for tests)"
        ) { $0.webhooksAllowPrivate = $1 },
        seconds(
            "TRIFACTOR_WEBHOOKS_RETRY_FOR", "--webhooks-retry-for",
            "How long an endpoint that keeps failing is retried before it is disabled and audited", "86400"
        ) { $0.webhooksRetryFor = $1 },
        int(
            "TRIFACTOR_WEBHOOKS_TIMEOUT", "--webhooks-timeout",
            "Seconds a webhook endpoint has to answer (connecting included)", "5", 1...30
        ) { $0.webhooksTimeout = $1 },
    ]
}
