import Core
import Crypto
import Foundation
import JOSE
import Store
import Synchronization

/// The OpenID Provider's signing keys: one active ES256 key (the default)
/// and one active RS256 key (OIDC Core's mandatory algorithm, for relying
/// parties that know only it), sealed at rest by the key ring like TOTP
/// secrets, each named by its RFC 7638 thumbprint.
///
/// A rotation publishes the new keys at once but signs with them only from
/// `active_from`, after every instance has re-read the keys (`refresh`) and
/// relying parties' caches of the set have expired: no instance ever meets a
/// token signed by a key it does not publish yet. The old keys sign until
/// then, and stay in the JWK Set for `retention` after, longer than any token
/// they signed lives.
final class SigningKeys: Sendable {
    private struct Loaded: Sendable {
        let key: SigningKey
        let activeFrom: Int64
        let retiredAt: Int64?
    }

    private struct State {
        var keys: [Loaded] = []
        var published: JWKSet?
        /// When the keys were last read (nil: never).
        var loadedAt: Int64?
    }

    let transactions: Transactions
    let sealer: KeyRing
    let clock: Clock
    /// How long a retired key stays published.
    static let retention: Int64 = 24 * 3600 * 1000
    /// How often another instance's rotation is picked up.
    static let refresh: Int64 = 10 * 1000
    /// How long after a rotation the new keys start signing (longer than `refresh` plus the JWK Set's max-age).
    static let defaultActivation: TimeInterval = 120
    private let state = Mutex(State())

    init(transactions: Transactions, sealer: KeyRing, clock: Clock) {
        self.transactions = transactions
        self.sealer = sealer
        self.clock = clock
    }

    /// The key of `algorithm` that signs now, making the first ones if there are none.
    func active(_ algorithm: Algorithm) throws -> SigningKey {
        try loadIfStale()
        let now = clock.now().millis
        if let key = signing(algorithm, now: now) { return key }
        try ensure()
        try load()
        guard let key = signing(algorithm, now: now) else {
            throw StoreError(.decoding, detail: "no active \(algorithm.rawValue) signing key after creating one")
        }
        return key
    }

    /// The key of `algorithm` that signs now from what was last read, without reading again (inside another
    /// transaction: a sign-out's logout token); nil before the first read.
    func cachedActive(_ algorithm: Algorithm) -> SigningKey? { signing(algorithm, now: clock.now().millis) }

    /// The newest key of `algorithm` whose time has come and has not passed.
    private func signing(_ algorithm: Algorithm, now: Int64) -> SigningKey? {
        state.withLock { s in
            s.keys.filter { $0.key.algorithm == algorithm && $0.activeFrom <= now && ($0.retiredAt ?? .max) > now }
                .max { $0.activeFrom < $1.activeFrom }?.key
        }
    }

    /// Every key a relying party may meet in a token: the active ones, those about to sign, and those retired
    /// within `retention`.
    func published() throws -> JWKSet {
        try loadIfStale()
        if let set = state.withLock({ $0.published }) { return set }
        try ensure()
        try load()
        guard let set = state.withLock({ $0.published }) else {
            throw StoreError(.decoding, detail: "no signing keys after creating them")
        }
        return set
    }

    /// Makes a key for each algorithm that has none that signs or will (at the first start).
    func ensure() throws {
        let now = clock.now().millis
        try transactions.write { db in
            for algorithm in [Algorithm.es256, .rs256] {
                let has = try db.queryOne(
                    "SELECT 1 AS x FROM oidc_signing_keys WHERE alg = $1 AND (retired_at IS NULL OR retired_at > $2)",
                    [.text(algorithm.rawValue), .int(now)])
                if has == nil { try insert(try SigningKey.generate(algorithm), activeFrom: now, on: db) }
            }
        }
    }

    /// Publishes new keys that sign from `after` seconds on, when the current ones stop; returns the new kids.
    @discardableResult
    func rotate(activatingAfter after: TimeInterval = defaultActivation) throws -> [String] {
        let now = clock.now().millis
        let switchover = now + Int64(after * 1000)
        let fresh = try [Algorithm.es256, .rs256].map { try SigningKey.generate($0) }
        try transactions.write { db in
            try db.execute(
                "UPDATE oidc_signing_keys SET retired_at = $1 WHERE retired_at IS NULL OR retired_at > $1",
                [.int(switchover)])
            for key in fresh { try insert(key, activeFrom: switchover, on: db) }
            // Keys retired long enough ago that nothing they signed is still valid are forgotten.
            try db.execute(
                "DELETE FROM oidc_signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1",
                [.int(now - Self.retention)])
        }
        try load()
        return fresh.map(\.keyID)
    }

    private func insert(_ key: SigningKey, activeFrom: Int64, on db: any SQLConnection) throws {
        let der = try key.pkcs8()
        let sealed = try der.withUnsafeBytes { raw in
            try sealer.seal(Array(raw), associatedData: Self.associatedData(key.keyID))
        }
        try db.execute(
            """
            INSERT INTO oidc_signing_keys (kid, alg, secret_sealed, public_jwk, created_at, active_from)
            VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (kid) DO NOTHING
            """,
            [
                .text(key.keyID), .text(key.algorithm.rawValue), .text(Data(sealed).base64EncodedString()),
                .text(String(decoding: key.publicJWK.json, as: UTF8.self)), .int(clock.now().millis), .int(activeFrom),
            ])
    }

    /// The seal of a signing key is bound to its kid (the resealer reads it as the row's id).
    static func associatedData(_ kid: String) -> [UInt8] { TOTPFactor.associatedData(FactorID(kid)) }

    private func loadIfStale() throws {
        let now = clock.now().millis
        if state.withLock({ $0.loadedAt.map { now - $0 < Self.refresh } ?? false }) { return }
        try load()
    }

    /// Reads the keys again: those that sign or will opened, the published set rebuilt.
    func load() throws {
        let now = clock.now().millis
        let rows = try transactions.read { db in
            try db.query(
                """
                SELECT kid, alg, secret_sealed, public_jwk, active_from, retired_at FROM oidc_signing_keys
                WHERE retired_at IS NULL OR retired_at >= $1 ORDER BY active_from DESC, kid
                """, [.int(now - Self.retention)]
            ).map {
                (
                    kid: try $0.text("kid"), sealed: try $0.text("secret_sealed"), jwk: try $0.text("public_jwk"),
                    from: try $0.int("active_from"), retired: try $0.optionalInt("retired_at")
                )
            }
        }
        var keys: [Loaded] = []
        var published: [JWK] = []
        for row in rows {
            published.append(try JWK(json: Array(row.jwk.utf8)))
            // Only keys that may still sign are opened; retired ones are public keys alone.
            guard (row.retired ?? .max) > now, let bytes = Data(base64Encoded: row.sealed) else { continue }
            let der = SecureBytes(try sealer.open(Array(bytes), associatedData: Self.associatedData(row.kid)))
            keys.append(Loaded(key: try SigningKey(pkcs8: der), activeFrom: row.from, retiredAt: row.retired))
        }
        let set = published.isEmpty ? nil : try JWKSet(keys: published)
        state.withLock {
            $0.keys = keys
            $0.published = set
            $0.loadedAt = now
        }
    }
}
