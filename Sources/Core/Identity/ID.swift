import Foundation

/// An identifier of one kind of thing: a stored string that a `UserID`
/// cannot be passed where a `SessionID` belongs. New ones are random UUIDs.
package struct ID<Tag>: Hashable, Sendable, CustomStringConvertible {
    /// The stored and wire form.
    package let raw: String

    package init(_ raw: String) { self.raw = raw }

    package var description: String { raw }

    /// A new random identifier: a version 4 UUID from `random`, lower case.
    package static func random(using random: RandomSource) -> ID {
        var b = random.bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let uuid = UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
        return ID(uuid.uuidString.lowercased())
    }
}

package enum UserTag {}
package enum SessionTag {}
package enum FactorTag {}
package enum ChallengeTag {}
package enum ApprovalTag {}
package enum AuthorizationTag {}
package enum VerificationTag {}
package enum APIKeyTag {}
package enum MessageTag {}
package enum RecoveryCodeTag {}

package typealias UserID = ID<UserTag>
package typealias SessionID = ID<SessionTag>
package typealias FactorID = ID<FactorTag>
package typealias ChallengeID = ID<ChallengeTag>
package typealias ApprovalID = ID<ApprovalTag>
package typealias AuthorizationID = ID<AuthorizationTag>
package typealias VerificationID = ID<VerificationTag>
package typealias APIKeyID = ID<APIKeyTag>
package typealias MessageID = ID<MessageTag>
package typealias RecoveryCodeID = ID<RecoveryCodeTag>
