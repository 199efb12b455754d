import Core
import Crypto
import Foundation
import Store

/// What an admin key may do.
enum AdminRole: String, Sendable, CaseIterable {
    /// Find and show users, query the audit log.
    case read
    /// And disable, enable, delete, reset second factors, revoke sessions, mark emails verified.
    case write
}

/// A live admin key: its name is what the audit log records for its actions.
struct AdminKey: Sendable {
    let id: String
    let name: String
    let role: AdminRole
    let createdAt: Int64
    let revokedAt: Int64?
}

/// Admin keys, made on the host (`trifactord admin-keys create`), sent as
/// `Authorization: Bearer tfadm_<id>_<secret>`. Only the secret's SHA-256 is
/// stored (190 bits of entropy: a slow hash would add nothing), compared in
/// constant time; an unknown id costs the same work as a known one.
struct AdminKeys: Sendable {
    let random: RandomSource
    let clock: Clock

    /// Makes a key; returns it and the token (the only time the secret exists in clear).
    func create(name: String, role: AdminRole, on db: any SQLConnection) throws -> (AdminKey, token: String) {
        let secret = random.alphanumerics(32)
        let key = AdminKey(
            id: Hex.encode(random.bytes(8)), name: name, role: role, createdAt: clock.now().millis, revokedAt: nil)
        try db.execute(
            "INSERT INTO admin_keys (id, name, role, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
            [.text(key.id), .text(name), .text(role.rawValue), .text(SHA256.hex(secret)), .int(key.createdAt)])
        try AuditLog.append(
            AuditEvent(
                kind: .adminKeyCreated, outcome: .success, detail: "admin=\(name) key=\(key.id) role=\(role.rawValue)"),
            at: key.createdAt, on: db)
        return (key, "tfadm_\(key.id)_\(secret)")
    }

    /// Every key, newest first.
    func list(on db: any SQLConnection) throws -> [AdminKey] {
        try db.query("SELECT id, name, role, created_at, revoked_at FROM admin_keys ORDER BY created_at DESC, id", [])
            .map {
                AdminKey(
                    id: try $0.text("id"), name: try $0.text("name"),
                    role: AdminRole(rawValue: try $0.text("role")) ?? .read,
                    createdAt: try $0.int("created_at"), revokedAt: try $0.optionalInt("revoked_at"))
            }
    }

    /// Revokes the key `id`; false when there is no such live key.
    func revoke(id: String, on db: any SQLConnection) throws -> Bool {
        let now = clock.now().millis
        guard
            let row = try db.queryOne("SELECT name FROM admin_keys WHERE id = $1 AND revoked_at IS NULL", [.text(id)]),
            try db.execute(
                "UPDATE admin_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [.text(id), .int(now)])
                == 1
        else { return false }
        try AuditLog.append(
            AuditEvent(kind: .adminKeyRevoked, outcome: .success, detail: "admin=\(try row.text("name")) key=\(id)"),
            at: now, on: db)
        return true
    }

    /// The live key a bearer token names, or nil.
    func authenticate(token: String?, on db: any SQLConnection) throws -> AdminKey? {
        guard let token, token.utf8.count <= 128, token.hasPrefix("tfadm_") else { return nil }
        let parts = token.dropFirst(6).split(separator: "_", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 16, parts[1].count <= 64 else { return nil }
        let secretHash = SHA256.hex(String(parts[1]))
        guard
            let row = try db.queryOne(
                "SELECT id, name, role, secret_hash, created_at, revoked_at FROM admin_keys WHERE id = $1",
                [.text(String(parts[0]))])
        else {
            _ = ConstantTime.equals(secretHash, SHA256.hex(""))
            return nil
        }
        guard ConstantTime.equals(secretHash, try row.text("secret_hash")), try row.optionalInt("revoked_at") == nil,
            let role = AdminRole(rawValue: try row.text("role"))
        else { return nil }
        return AdminKey(
            id: try row.text("id"), name: try row.text("name"), role: role, createdAt: try row.int("created_at"),
            revokedAt: nil)
    }
}
