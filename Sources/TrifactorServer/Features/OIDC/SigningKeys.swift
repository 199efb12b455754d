import Core
import Crypto
import Foundation
import JOSE
import Store
import Synchronization

/// The OpenID Provider's signing keys: one active ES256 key (the default)
/// and one active RS256 key (OIDC Core's mandatory algorithm, for relying
/// parties that know only it), sealed at rest by the key ring like TOTP
/// secrets, each named by its RFC 7638 thumbprint. A retired key stays in
/// the JWK Set for `retention` after it stopped signing: longer than any
/// token it signed lives, and than relying parties cache the set.
final class SigningKeys: Sendable {
    private struct State {
        var active: [Algorithm: SigningKey] = [:]
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
    static let refresh: Int64 = 60 * 1000
    private let state = Mutex(State())

    init(transactions: Transactions, sealer: KeyRing, clock: Clock) {
        self.transactions = transactions
        self.sealer = sealer
        self.clock = clock
    }

    /// The active key of `algorithm`, making the first ones if there are none.
    func active(_ algorithm: Algorithm) throws -> SigningKey {
        try loadIfStale()
        if let key = state.withLock({ $0.active[algorithm] }) { return key }
        try ensure()
        try load()
        guard let key = state.withLock({ $0.active[algorithm] }) else {
            throw StoreError(.decoding, detail: "no active \(algorithm.rawValue) signing key after creating one")
        }
        return key
    }

    /// Every key a relying party may meet in a token: the active ones and those retired within `retention`.
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

    /// Makes an active key for each algorithm that has none (at start, and after a rotation).
    func ensure() throws {
        let now = clock.now().millis
        try transactions.write { db in
            for algorithm in [Algorithm.es256, .rs256] {
                let has = try db.queryOne(
                    "SELECT 1 AS x FROM oidc_signing_keys WHERE alg = $1 AND retired_at IS NULL",
                    [.text(algorithm.rawValue)])
                if has == nil { try insert(try SigningKey.generate(algorithm), now: now, on: db) }
            }
        }
    }

    /// Retires the active keys and makes new ones; returns the new kids.
    @discardableResult
    func rotate() throws -> [String] {
        let now = clock.now().millis
        let fresh = try [Algorithm.es256, .rs256].map { try SigningKey.generate($0) }
        try transactions.write { db in
            try db.execute("UPDATE oidc_signing_keys SET retired_at = $1 WHERE retired_at IS NULL", [.int(now)])
            for key in fresh { try insert(key, now: now, on: db) }
            // Keys retired long enough ago that nothing they signed is still valid are forgotten.
            try db.execute(
                "DELETE FROM oidc_signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1",
                [.int(now - Self.retention)])
        }
        try load()
        return fresh.map(\.keyID)
    }

    private func insert(_ key: SigningKey, now: Int64, on db: any SQLConnection) throws {
        let der = try key.pkcs8()
        let sealed = try der.withUnsafeBytes { raw in
            try sealer.seal(Array(raw), associatedData: Self.associatedData(key.keyID))
        }
        try db.execute(
            """
            INSERT INTO oidc_signing_keys (kid, alg, secret_sealed, public_jwk, created_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (kid) DO NOTHING
            """,
            [
                .text(key.keyID), .text(key.algorithm.rawValue), .text(Data(sealed).base64EncodedString()),
                .text(String(decoding: key.publicJWK.json, as: UTF8.self)), .int(now),
            ])
    }

    /// The seal of a signing key is bound to its kid (the resealer reads it as the row's id).
    static func associatedData(_ kid: String) -> [UInt8] { TOTPFactor.associatedData(FactorID(kid)) }

    private func loadIfStale() throws {
        let now = clock.now().millis
        if state.withLock({ $0.loadedAt.map { now - $0 < Self.refresh } ?? false }) { return }
        try load()
    }

    /// Reads the keys again: the active ones opened, the published set rebuilt.
    func load() throws {
        let now = clock.now().millis
        let rows = try transactions.read { db in
            try db.query(
                """
                SELECT kid, alg, secret_sealed, public_jwk, retired_at FROM oidc_signing_keys
                WHERE retired_at IS NULL OR retired_at >= $1 ORDER BY created_at DESC, kid
                """, [.int(now - Self.retention)]
            ).map {
                (
                    kid: try $0.text("kid"), alg: try $0.text("alg"), sealed: try $0.text("secret_sealed"),
                    jwk: try $0.text("public_jwk"), retired: try $0.optionalInt("retired_at")
                )
            }
        }
        var active: [Algorithm: SigningKey] = [:]
        var published: [JWK] = []
        for row in rows {
            guard let algorithm = Algorithm(rawValue: row.alg) else { continue }
            published.append(try JWK(json: Array(row.jwk.utf8)))
            guard row.retired == nil, active[algorithm] == nil, let bytes = Data(base64Encoded: row.sealed) else {
                continue
            }
            let der = SecureBytes(try sealer.open(Array(bytes), associatedData: Self.associatedData(row.kid)))
            active[algorithm] = try SigningKey(pkcs8: der)
        }
        let set = published.isEmpty ? nil : try JWKSet(keys: published)
        state.withLock {
            $0.active = active
            $0.published = set
            $0.loadedAt = now
        }
    }
}
