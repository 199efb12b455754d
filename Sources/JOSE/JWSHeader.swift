/// The protected header of a JWS as Trifactor reads it (RFC 7515 §4.1):
/// the algorithm, the key's id and the token's type. Headers that would
/// fetch or carry a key (`jku`, `jwk`, `x5u`, `x5c`) are ignored on
/// purpose: the verifier's key set decides which keys count, never the token.
package struct JWSHeader: Sendable, Equatable {
    /// `alg`, one the caller allowed.
    package let algorithm: Algorithm
    /// `kid`, when present.
    package let keyID: String?
    /// `typ`, when present (`"JWT"`, `"at+jwt"`, …).
    package let type: String?

    package init(algorithm: Algorithm, keyID: String?, type: String?) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.type = type
    }

    /// Reads a header from its parsed members.
    /// - Throws: `.malformed` when `alg`, `kid` or
    ///   `typ` is not a string; `.criticalHeader` when `crit` is present
    ///   (RFC 7515 §4.1.11: a recipient that understands none of the listed
    ///   extensions must refuse); `.algorithmNotAllowed` when `alg` is not in
    ///   `allowed` (`none` and `HS256` never are).
    init(members: [String: JSONValue], allowed: Set<Algorithm>) throws(JOSEError) {
        guard members["crit"] == nil else { throw .criticalHeader }
        guard let name = members["alg"]?.string else { throw .malformed }
        guard let algorithm = Algorithm(rawValue: name), allowed.contains(algorithm) else {
            throw .algorithmNotAllowed
        }
        func optionalString(_ name: String) throws(JOSEError) -> String? {
            guard let value = members[name] else { return nil }
            guard let text = value.string else { throw .malformed }
            return text
        }
        self.init(algorithm: algorithm, keyID: try optionalString("kid"), type: try optionalString("typ"))
    }

    /// The header's members as written when signing, `typ` and `kid` when set.
    var members: [String: JSONValue] {
        var members: [String: JSONValue] = ["alg": .string(algorithm.rawValue)]
        if let keyID { members["kid"] = .string(keyID) }
        if let type { members["typ"] = .string(type) }
        return members
    }
}
