import Core
import Crypto
import Foundation
package import Store

/// An API key of the phone verification API.
package struct APIKey: Sendable {
    let id: APIKeyID
    let name: String
    /// The public part, sent as the Basic user name.
    package let apiKey: String
    let createdAt: Int64
    let revokedAt: Int64?

    /// The key under which Trifactor's own second-factor flows use the
    /// phone verification service (never stored, never accepted over HTTP).
    static let internalMFA = APIKey(
        id: APIKeyID("internal:mfa"), name: "second factors", apiKey: "internal-mfa", createdAt: 0, revokedAt: nil)
}

/// API keys: a public key id and a secret shown once. Only the secret's
/// SHA-256 is stored (it has 190 bits of entropy, so a slow hash would add
/// nothing), compared in constant time.
package struct APIKeys: Sendable {
    let random: RandomSource
    let clock: Clock

    /// Creates a key named `name`; returns it and its secret (the only time the secret exists in clear).
    package func create(name: String, on db: any SQLConnection) throws -> (APIKey, secret: String) {
        let secret = random.alphanumerics(32)
        let key = APIKey(
            id: .random(using: random), name: name, apiKey: Hex.encode(random.bytes(8)), createdAt: clock.now().millis,
            revokedAt: nil)
        try db.execute(
            "INSERT INTO api_keys (id, name, api_key, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
            [key.id.sql, .text(name), .text(key.apiKey), .text(SHA256.hex(secret)), .int(key.createdAt)])
        try AuditLog.append(
            AuditEvent(kind: .apiKeyCreated, outcome: .success, detail: "key=\(key.apiKey) name=\(name)"),
            at: key.createdAt, on: db)
        return (key, secret)
    }

    /// Every key, newest first.
    func list(on db: any SQLConnection) throws -> [APIKey] {
        try db.query(
            "SELECT id, name, api_key, created_at, revoked_at FROM api_keys ORDER BY created_at DESC, api_key", []
        ).map {
            APIKey(
                id: try $0.id("id"), name: try $0.text("name"), apiKey: try $0.text("api_key"),
                createdAt: try $0.int("created_at"),
                revokedAt: try $0.optionalInt("revoked_at"))
        }
    }

    /// Revokes `apiKey`; false when there is no such live key.
    func revoke(apiKey: String, on db: any SQLConnection) throws -> Bool {
        let now = clock.now().millis
        guard
            try db.execute(
                "UPDATE api_keys SET revoked_at = $2 WHERE api_key = $1 AND revoked_at IS NULL",
                [.text(apiKey), .int(now)]) == 1
        else {
            return false
        }
        try AuditLog.append(
            AuditEvent(kind: .apiKeyRevoked, outcome: .success, detail: "key=\(apiKey)"), at: now, on: db)
        return true
    }

    /// The live key that an `Authorization: Basic …` value names, or nil.
    /// The secret is copied once out of the header into memory that is wiped
    /// when this returns, and only its hash is compared.
    func authenticate(authorization value: String?, on db: any SQLConnection) throws -> APIKey? {
        guard let value, value.count <= 512, value.lowercased().hasPrefix("basic "),
            var decoded = Data(base64Encoded: String(value.dropFirst(6)).trimmingCharacters(in: .whitespaces))
        else { return nil }
        defer { decoded.resetBytes(in: 0..<decoded.count) }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")),
            let apiKey = String(bytes: decoded[..<colon], encoding: .utf8)
        else { return nil }
        let secret = SecureBytes(Array(decoded[(colon + 1)...]))
        guard apiKey.count <= 64, secret.count <= 128,
            let row = try db.queryOne(
                "SELECT id, name, api_key, secret_hash, created_at, revoked_at FROM api_keys WHERE api_key = $1",
                [.text(apiKey)])
        else {
            // Same work as a known key, so timing does not tell keys apart.
            _ = ConstantTime.equals(SHA256.hex(secret), SHA256.hex(""))
            return nil
        }
        guard ConstantTime.equals(SHA256.hex(secret), try row.text("secret_hash")),
            try row.optionalInt("revoked_at") == nil
        else { return nil }
        return APIKey(
            id: try row.id("id"), name: try row.text("name"), apiKey: try row.text("api_key"),
            createdAt: try row.int("created_at"), revokedAt: nil)
    }
}
