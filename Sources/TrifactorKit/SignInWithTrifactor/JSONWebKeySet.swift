import Foundation

/// The provider's public signing keys (`jwks_uri`), read with Foundation alone: P-256 keys for ES256 and RSA keys
/// for RS256. Keys of other kinds, curves or uses are skipped, never guessed at.
struct JSONWebKeySet: Sendable {
    enum Material: Sendable, Equatable {
        case p256(x: Data, y: Data)
        case rsa(modulus: Data, exponent: Data)
    }

    struct Key: Sendable, Equatable {
        let id: String?
        let material: Material
    }

    let keys: [Key]

    /// The keys of a JWK Set document, or nil when it is not one.
    init?(json data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = object["keys"] as? [[String: Any]]
        else { return nil }
        keys = list.compactMap(Self.key)
    }

    private static func key(_ jwk: [String: Any]) -> Key? {
        if let use = jwk["use"] as? String, use != "sig" { return nil }
        let id = jwk["kid"] as? String
        switch jwk["kty"] as? String {
        case "EC":
            guard jwk["crv"] as? String == "P-256", let x = (jwk["x"] as? String).flatMap(Base64URL.decode),
                let y = (jwk["y"] as? String).flatMap(Base64URL.decode), x.count == 32, y.count == 32
            else { return nil }
            return Key(id: id, material: .p256(x: x, y: y))
        case "RSA":
            guard let n = (jwk["n"] as? String).flatMap(Base64URL.decode),
                let e = (jwk["e"] as? String).flatMap(Base64URL.decode), n.count >= 256, !e.isEmpty
            else { return nil }
            return Key(id: id, material: .rsa(modulus: n, exponent: e))
        default:
            return nil
        }
    }

    /// The keys that may have signed a token with `algorithm` and `keyID`: the one with that id, or, when the token
    /// names none, every key of the algorithm's kind.
    func candidates(algorithm: String, keyID: String?) -> [Key] {
        keys.filter { key in
            let fits =
                switch (algorithm, key.material) {
                case ("ES256", .p256), ("RS256", .rsa): true
                default: false
                }
            return fits && (keyID == nil || key.id == keyID)
        }
    }
}
