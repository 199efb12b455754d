package import Foundation

/// Authenticator assurance level (NIST SP 800-63B §4).
package enum AssuranceLevel: Int, Sendable, Codable, Comparable {
    /// One factor (a password).
    case aal1 = 1
    /// Two distinct factors.
    case aal2 = 2

    package static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// An authentication method reference recorded on a session: the values of
/// RFC 8176's registry, spelled as there, and `lookup` (a code from a list,
/// for recovery codes), which that registry lacks.
package enum AuthMethod: String, Sendable, Codable, CaseIterable {
    /// Biometric facial recognition.
    case face
    /// Biometric fingerprint.
    case fpt
    /// Geolocation.
    case geo
    /// Proof of possession of a hardware-secured key.
    case hwk
    /// Biometric iris scan.
    case iris
    /// Knowledge-based authentication.
    case kba
    /// Multiple-channel authentication.
    case mca
    /// Multiple-factor authentication.
    case mfa
    /// One-time password (an authenticator app).
    case otp
    /// Personal identification number.
    case pin
    /// Password.
    case pwd
    /// Risk-based authentication.
    case rba
    /// Biometric retina scan.
    case retina
    /// Smart card.
    case sc
    /// A code sent by SMS (or read out by a voice call) to a phone.
    case sms
    /// Proof of possession of a software-secured key.
    case swk
    /// Confirmation by telephone call.
    case tel
    /// User presence test (here: user verification by the authenticator).
    case user
    /// Biometric voiceprint.
    case vbm
    /// Windows integrated authentication.
    case wia
    /// A one-time code from a list (recovery codes); not in RFC 8176.
    case lookup
}

/// Lifetimes of a session: an idle timeout, renewed by use, and an absolute
/// lifetime that nothing renews.
package struct SessionPolicy: Sendable, Equatable {
    /// Longest gap between two uses.
    package var idleTimeout: TimeInterval
    /// Longest life from sign-in.
    package var absoluteLifetime: TimeInterval

    /// Defaults: 30 minutes idle, 12 hours absolute.
    package init(idleTimeout: TimeInterval = 30 * 60, absoluteLifetime: TimeInterval = 12 * 3600) {
        self.idleTimeout = idleTimeout
        self.absoluteLifetime = absoluteLifetime
    }

    /// When a session created at `created` and last used at `lastSeen` ends.
    package func expiry(created: Date, lastSeen: Date) -> Date {
        min(created.addingTimeInterval(absoluteLifetime), lastSeen.addingTimeInterval(idleTimeout))
    }

    /// Whether such a session is over at `now`.
    package func isExpired(created: Date, lastSeen: Date, now: Date) -> Bool {
        now >= expiry(created: created, lastSeen: lastSeen)
    }

    /// Whether a use at `now` should be written back: only once per
    /// 1/30 of the idle timeout (a minute for the default), so that reading a
    /// session is not a write every time. The idle timeout is then exact to
    /// within that slice.
    package func shouldRecordUse(lastSeen: Date, now: Date) -> Bool {
        now.timeIntervalSince(lastSeen) >= idleTimeout / 30
    }
}
