/// A JWK Set (RFC 7517 §5), `{"keys":[…]}`: the public keys a provider
/// publishes at its `jwks_uri`, looked up by `kid` when a token arrives.
package struct JWKSet: Sendable, Equatable {
    package let keys: [JWK]

    /// A set of `keys`.
    /// - Throws: `.invalidKey` when two keys share a `kid`: a lookup would
    ///   have to guess.
    package init(keys: [JWK]) throws(JOSEError) {
        var seen = Set<String>()
        for id in keys.compactMap(\.keyID) where !seen.insert(id).inserted { throw .invalidKey }
        self.keys = keys
    }

    /// Parses a key set. Keys of kinds Trifactor does not use are skipped, as
    /// RFC 7517 §5 asks, so a provider may publish more kinds than we read.
    /// - Throws: `.malformed` when it is not `{"keys":[objects]}`;
    ///   `.invalidKey` for a key that breaks a rule (private members, bad
    ///   numbers, a duplicate `kid`): such a set is refused whole.
    package init(json: [UInt8]) throws(JOSEError) {
        guard let list = try JSONValue.parseObject(json)["keys"], case .array(let entries) = list else {
            throw .malformed
        }
        var keys: [JWK] = []
        for entry in entries {
            guard let members = entry.object else { throw .malformed }
            do {
                keys.append(try JWK(members: members))
            } catch .unsupportedKey {
                continue
            }
        }
        try self.init(keys: keys)
    }

    /// The key whose `kid` is `id`.
    package func key(id: String) -> JWK? { keys.first { $0.keyID == id } }

    /// The set as compact JSON with sorted members, the keys in their order.
    package var json: [UInt8] { JSONValue.serialize(["keys": .array(keys.map { .object($0.members) })]) }
}
