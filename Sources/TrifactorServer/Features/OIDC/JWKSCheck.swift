import Foundation
import JOSE

/// Whether a client's registered JWK Set can verify its assertions.
enum JWKSCheck {
    /// Why `text` is not a usable JWK Set; nil when it is.
    static func refusal(_ text: String) -> String? {
        guard text.utf8.count <= 64 * 1024,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let keys = object["keys"] as? [[String: Any]], !keys.isEmpty, keys.count <= 10
        else { return "must be a JWK Set: {\"keys\": [...]} with 1 to 10 keys, at most 64 KiB" }
        // Read as the token endpoint will read it, so a set that could never verify an assertion is refused now,
        // with a reason, rather than every assertion later.
        let set: JWKSet
        do {
            set = try JWKSet(json: Array(text.utf8))
        } catch {
            return
                "holds a key this server cannot read: EC keys are P-256 with x and y of 32 bytes each (RFC 7518 §6.2.1.2), RSA keys 2048 bits or more, OKP keys Ed25519 with an x of 32 bytes (RFC 8037 §2), no private members, each kid once"
        }
        guard !set.keys.isEmpty else { return "holds no P-256, Ed25519 or RSA signing key" }
        return nil
    }
}
