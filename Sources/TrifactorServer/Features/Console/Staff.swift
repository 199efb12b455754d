import Core
import Foundation
import Store

/// A staff member: a Trifactor user who may open the operator's console, with the role of an admin key (`read`:
/// look; `write`: also act on accounts).
struct StaffMember: Sendable, Equatable {
    let userID: UserID
    let email: String
    let role: AdminRole
    /// Who made them staff (`host:<login>`).
    let grantedBy: String
    let grantedAt: Int64
}

/// The `staff` table (migration 24).
enum StaffRepository {
    /// The staff row of `userID`, nil when they are not staff.
    static func find(_ userID: UserID, on db: any SQLConnection) throws -> StaffMember? {
        try db.queryOne(
            """
            SELECT s.user_id, u.email, s.role, s.granted_by, s.granted_at FROM staff s JOIN users u ON u.id = s.user_id
            WHERE s.user_id = $1
            """, [.text(userID.raw)]
        ).map(member)
    }

    /// Every staff member, by email.
    static func list(on db: any SQLConnection) throws -> [StaffMember] {
        try db.query(
            """
            SELECT s.user_id, u.email, s.role, s.granted_by, s.granted_at FROM staff s JOIN users u ON u.id = s.user_id
            ORDER BY u.email
            """, []
        ).map(member)
    }

    /// Makes `userID` staff with `role`, or changes their role.
    static func upsert(_ userID: UserID, role: AdminRole, by: String, at: Int64, on db: any SQLConnection) throws {
        try db.execute(
            """
            INSERT INTO staff (user_id, role, granted_by, granted_at) VALUES ($1, $2, $3, $4)
            ON CONFLICT (user_id) DO UPDATE SET role = excluded.role, granted_by = excluded.granted_by,
              granted_at = excluded.granted_at
            """, [.text(userID.raw), .text(role.rawValue), .text(by), .int(at)])
    }

    /// Removes `userID` from the staff; false when they were not staff.
    static func remove(_ userID: UserID, on db: any SQLConnection) throws -> Bool {
        try db.execute("DELETE FROM staff WHERE user_id = $1", [.text(userID.raw)]) == 1
    }

    private static func member(_ row: Row) throws -> StaffMember {
        StaffMember(
            userID: UserID(try row.text("user_id")), email: try row.text("email"),
            role: AdminRole(rawValue: try row.text("role")) ?? .read, grantedBy: try row.text("granted_by"),
            grantedAt: try row.int("granted_at"))
    }
}

/// Granting and revoking staff, on the host (`trifactord staff`): each change audited with who made it.
struct StaffService: Sendable {
    let transactions: Transactions
    let clock: Clock

    /// Makes the account with `email` staff with `role` (or changes its role); audited as `staff.granted`.
    /// - Throws: `StaffFailure.noSuchAccount` when no account has that email.
    func grant(email: String, role: AdminRole, actor: String) throws -> StaffMember {
        let now = clock.now().millis
        return try transactions.write { db in
            guard let user = try AccountRepository.find(email: Self.normalised(email), on: db) else {
                throw StaffFailure.noSuchAccount
            }
            try StaffRepository.upsert(user.id, role: role, by: actor, at: now, on: db)
            try AuditLog.append(
                AuditEvent(
                    kind: .staffGranted, outcome: .success, userID: user.id.raw,
                    detail: "admin=\(actor) role=\(role.rawValue)"), at: now, on: db)
            guard let member = try StaffRepository.find(user.id, on: db) else { throw StaffFailure.noSuchAccount }
            return member
        }
    }

    /// Removes the account with `email` from the staff; audited as `staff.revoked`.
    /// - Throws: `StaffFailure.noSuchAccount`, or `.notStaff` when the account is not staff.
    func revoke(email: String, actor: String) throws {
        let now = clock.now().millis
        try transactions.write { db in
            guard let user = try AccountRepository.find(email: Self.normalised(email), on: db) else {
                throw StaffFailure.noSuchAccount
            }
            guard try StaffRepository.remove(user.id, on: db) else { throw StaffFailure.notStaff }
            try AuditLog.append(
                AuditEvent(kind: .staffRevoked, outcome: .success, userID: user.id.raw, detail: "admin=\(actor)"),
                at: now, on: db)
        }
    }

    /// Every staff member.
    func list() throws -> [StaffMember] { try transactions.read { try StaffRepository.list(on: $0) } }

    /// The staff row of `userID`, nil when not staff.
    func member(_ userID: UserID) throws -> StaffMember? {
        try transactions.read { try StaffRepository.find(userID, on: $0) }
    }

    /// An address as accounts store it.
    private static func normalised(_ email: String) -> String { EmailAddress(email)?.value ?? email.lowercased() }
}

/// Refusals of the staff commands.
enum StaffFailure: Error, Equatable {
    case noSuchAccount
    case notStaff
}
