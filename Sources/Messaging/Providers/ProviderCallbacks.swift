import Core
import Crypto
package import Foundation

/// Checks that a delivery receipt or call event really comes from the
/// provider, as each documents it. Every comparison is constant-time, and a
/// signature older or newer than five minutes is refused (a replay).
package enum ProviderCallbacks {
    package static let freshness: TimeInterval = 300

    /// Why a callback is refused (audited, never shown beyond "forbidden").
    package enum Refusal: Error, Equatable, CustomStringConvertible {
        case unsigned, badSignature, stale, unknownAccount, noSecret

        package var description: String {
            switch self {
            case .unsigned: "unsigned"
            case .badSignature: "signature does not match"
            case .stale: "timestamp outside five minutes"
            case .unknownAccount: "no such provider account"
            case .noSecret: "no signature secret configured for this account"
            }
        }
    }

    /// Vonage's signed requests (SMS delivery receipts): every parameter but
    /// `sig`, sorted by name, as `&name=value` with `&` and `=` in values
    /// replaced by `_`, under HMAC-SHA256 with the signature secret, in hex;
    /// `timestamp` (Unix seconds) must be within five minutes.
    /// - Returns: what identifies this callback whatever its spelling (the
    ///   signature as computed): a replay, however respelled, returns it again.
    @discardableResult
    package static func checkVonageSignature(_ parameters: [String: String], secret: String, now: Date) throws(Refusal)
        -> String
    {
        guard let sig = parameters["sig"], !sig.isEmpty else { throw .unsigned }
        guard let stamp = parameters["timestamp"].flatMap(TimeInterval.init),
            abs(now.timeIntervalSince1970 - stamp) <= freshness
        else { throw .stale }
        let expected = vonageSignature(parameters, secret: secret)
        guard ConstantTime.equals(Array(sig.lowercased().utf8), Array(expected.utf8)) else { throw .badSignature }
        return expected
    }

    /// The `sig` Vonage computes for `parameters` (lower-case hex).
    package static func vonageSignature(_ parameters: [String: String], secret: String) -> String {
        let text = parameters.filter { $0.key != "sig" }.sorted { $0.key < $1.key }.map { key, value in
            "&\(key)=" + value.replacingOccurrences(of: "&", with: "_").replacingOccurrences(of: "=", with: "_")
        }.joined()
        return Hex.encode(HMAC.authenticate(Array(text.utf8), key: Array(secret.utf8), algorithm: .sha256))
    }

    /// Vonage's signed webhooks (Voice API events): `Authorization: Bearer`
    /// a JWT signed HS256 with the signature secret, whose `iat` is fresh and
    /// whose `payload_hash` is the SHA-256 of the body (hex).
    /// - Returns: what identifies this event whatever its spelling (the JWT's
    ///   signed header and claims, which no respelling can change).
    @discardableResult
    package static func checkVonageJWT(authorization: String?, body: [UInt8], secret: String, now: Date) throws(Refusal)
        -> String
    {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { throw .unsigned }
        let token = authorization.dropFirst(7).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])),
            let claimsBytes = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            let header = (try? JSONSerialization.jsonObject(with: Data(headerBytes))) as? [String: Any],
            header["alg"] as? String == "HS256",
            let claims = (try? JSONSerialization.jsonObject(with: Data(claimsBytes))) as? [String: Any]
        else { throw .badSignature }
        let expected = HMAC.authenticate(
            Array("\(parts[0]).\(parts[1])".utf8), key: Array(secret.utf8), algorithm: .sha256)
        guard ConstantTime.equals(signature, expected) else { throw .badSignature }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, abs(now.timeIntervalSince1970 - iat) <= freshness
        else { throw .stale }
        if let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp < now.timeIntervalSince1970 { throw .stale }
        guard let hash = claims["payload_hash"] as? String,
            ConstantTime.equals(Array(hash.lowercased().utf8), Array(SHA256.hex(body).utf8))
        else {
            throw .badSignature
        }
        return "\(parts[0]).\(parts[1])"
    }

    /// Twilio's `X-Twilio-Signature`: base64 of HMAC-SHA1 under the auth
    /// token, over the full URL Twilio requested followed by each POST
    /// parameter's name and value, sorted by name.
    /// - Returns: what identifies this callback (the signature as computed).
    @discardableResult
    package static func checkTwilioSignature(
        _ signature: String?, url: String, parameters: [(String, String)], token: String
    ) throws(Refusal) -> String {
        guard let signature, !signature.isEmpty else { throw .unsigned }
        let expected = twilioSignature(url: url, parameters: parameters, token: token)
        guard ConstantTime.equals(Array(signature.utf8), Array(expected.utf8)) else { throw .badSignature }
        return expected
    }

    /// The signature Twilio computes.
    package static func twilioSignature(url: String, parameters: [(String, String)], token: String) -> String {
        let text = url + parameters.sorted { ($0.0, $0.1) < ($1.0, $1.1) }.map { $0.0 + $0.1 }.joined()
        return Data(HMAC.authenticate(Array(text.utf8), key: Array(token.utf8), algorithm: .sha1)).base64EncodedString()
    }

    /// The pairs of a form-encoded body, in order, repeats kept (at most 100 of 64 KiB).
    package static func formPairs(_ body: [UInt8]) -> [(String, String)] {
        String(decoding: body.prefix(65_536), as: UTF8.self).split(separator: "&").prefix(100).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (s: Substring) in s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), !name.isEmpty else { return nil }
            return (name, parts.count == 2 ? decode(parts[1]) ?? "" : "")
        }
    }
}
