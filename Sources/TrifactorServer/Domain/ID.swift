import Core
import Foundation
import Store

/// An identifier of one kind of thing: a stored string that a `UserID`
/// cannot be passed where a `SessionID` belongs. New ones are random UUIDs.
struct ID<Tag>: Hashable, Sendable, CustomStringConvertible {
    /// The stored and wire form.
    let raw: String

    init(_ raw: String) { self.raw = raw }

    var description: String { raw }

    /// A new random identifier: a version 4 UUID from `random`, lower case.
    static func random(using random: RandomSource) -> ID {
        var b = random.bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        return ID(uuid.uuidString.lowercased())
    }

    /// The SQL parameter.
    var sql: SQLValue { .text(raw) }
}

enum UserTag {}
enum SessionTag {}
enum FactorTag {}
enum ChallengeTag {}
enum ApprovalTag {}
enum AuthorizationTag {}
enum VerificationTag {}
enum APIKeyTag {}
enum MessageTag {}
enum RecoveryCodeTag {}

typealias UserID = ID<UserTag>
typealias SessionID = ID<SessionTag>
typealias FactorID = ID<FactorTag>
typealias ChallengeID = ID<ChallengeTag>
typealias ApprovalID = ID<ApprovalTag>
typealias AuthorizationID = ID<AuthorizationTag>
typealias VerificationID = ID<VerificationTag>
typealias APIKeyID = ID<APIKeyTag>
typealias MessageID = ID<MessageTag>
typealias RecoveryCodeID = ID<RecoveryCodeTag>

extension Row {
    /// The column `name` as an identifier.
    func id<Tag>(_ name: String) throws -> ID<Tag> { ID(try text(name)) }

    /// The column `name` as an identifier, or nil when NULL.
    func optionalID<Tag>(_ name: String) throws -> ID<Tag>? { try optionalText(name).map { ID($0) } }
}

extension Date {
    /// Milliseconds since 1970, as stored.
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    /// A date from stored milliseconds.
    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}
