import Crypto
package import Foundation

/// Standard Webhooks signatures (standardwebhooks.com): `v1,` and the base64
/// of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the
/// bytes of a `whsec_…` secret. Several space-separated signatures in one
/// header let a receiver accept either secret while one is being rotated.
package enum WebhookSignature {
    /// The prefix of every secret, as the Standard Webhooks libraries expect it.
    package static let secretPrefix = "whsec_"

    /// A new secret: `whsec_` and the base64 of 24 random bytes (192 bits; 24 so that no padding shows).
    package static func newSecret(_ bytes: [UInt8]) -> String {
        secretPrefix + Data(bytes).base64EncodedString()
    }

    /// The key bytes of a `whsec_…` secret; nil when it is not one.
    package static func key(of secret: String) -> [UInt8]? {
        guard secret.hasPrefix(secretPrefix),
            let data = Data(base64Encoded: String(secret.dropFirst(secretPrefix.count))), data.count >= 16
        else { return nil }
        return Array(data)
    }

    /// The `webhook-signature` header's value: one `v1,…` per secret, newest first, separated by spaces.
    /// A secret that is not a `whsec_…` value signs nothing (it cannot come from `newSecret`).
    package static func header(id: String, timestamp: Int64, body: Data, secrets: [String]) -> String {
        var message = Array("\(id).\(timestamp).".utf8)
        message.append(contentsOf: body)
        return secrets.compactMap(key(of:)).map {
            "v1," + Data(HMAC.authenticate(message, key: $0, algorithm: .sha256)).base64EncodedString()
        }.joined(separator: " ")
    }
}
