import Synchronization

/// Public keys read from JWKs that arrive with each request (a DPoP proof carries its `jwk`), kept by their
/// members so that a client sending the same key again costs a dictionary lookup instead of a new OpenSSL key (an
/// EC point decoded and checked on the curve). The same members always make the same key, so a hit answers what a
/// miss would; a refused JWK is never kept. At most `capacity` keys: when full, it starts again empty, so keys
/// made up by a caller cost it memory for a moment at most.
package final class JWKCache: Sendable {
    private let keys = Mutex<[[String: JSONValue]: JWK]>([:])
    private let capacity: Int

    /// A cache of at most `capacity` keys.
    package init(capacity: Int = 1024) { self.capacity = capacity }

    /// The key of the JWK `members`, made once.
    /// - Throws: as `JWK.init(members:)`.
    package func key(_ members: [String: JSONValue]) throws(JOSEError) -> JWK {
        if let known = keys.withLock({ $0[members] }) { return known }
        let key = try JWK(members: members)
        keys.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[members] = key
        }
        return key
    }

    /// How many keys it holds now.
    package var count: Int { keys.withLock { $0.count } }
}

/// Registered JWK Sets read from their JSON text (a `private_key_jwt` client's keys, read at every token
/// request), kept by that text: the same text always reads as the same set, and a client whose keys change has a
/// new text. Bounded as `JWKCache` is; a set that cannot be read is never kept.
package final class JWKSetCache: Sendable {
    private let sets = Mutex<[String: JWKSet]>([:])
    private let capacity: Int

    /// A cache of at most `capacity` sets.
    package init(capacity: Int = 1024) { self.capacity = capacity }

    /// The set `json` holds, read once.
    /// - Throws: as `JWKSet.init(json:)`.
    package func set(_ json: String) throws(JOSEError) -> JWKSet {
        if let known = sets.withLock({ $0[json] }) { return known }
        let set = try JWKSet(json: Array(json.utf8))
        sets.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[json] = set
        }
        return set
    }
}
