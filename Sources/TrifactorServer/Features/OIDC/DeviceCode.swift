import Core
import Crypto
import Foundation

/// The code a person reads off a device and types on `/device` (RFC 8628 §6.1): eight letters from twenty
/// consonants that no font confuses with a digit or with each other (no vowels, so it never spells a word), shown
/// as `XXXX-XXXX` and read back however it is typed (any case, dashes and spaces ignored). 20⁸ ≈ 2.6 × 10¹⁰
/// values: with the attempts on `/device` limited per address, guessing a live code in its ten minutes is hopeless
/// (§5.1).
enum UserCode {
    static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
    static let length = 8

    /// A new code, each letter uniformly drawn.
    static func make(_ random: RandomSource) -> String {
        String((0..<length).map { _ in alphabet[Int(random.uniform(UInt32(alphabet.count)))] })
    }

    /// The code as typed, in its stored form (eight capitals), or nil when it cannot be one: spaces and dashes are
    /// dropped, lower case is raised; any other character, or another length, is not a code.
    static func normalize(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        let kept = typed.uppercased().filter { !$0.isWhitespace && $0 != "-" }
        guard kept.count == length, kept.allSatisfy(alphabet.contains) else { return nil }
        return kept
    }

    /// `BCDF-GHJK`, as the device shows it.
    static func display(_ code: String) -> String {
        guard code.count == length else { return code }
        return "\(code.prefix(length / 2))-\(code.suffix(length / 2))"
    }

    /// The SHA-256 kept in the database: the code itself is never stored.
    static func hash(_ normalized: String) -> String { SHA256.hex("user_code:" + normalized) }
}

/// One device authorization (RFC 8628 §3.1) as stored: its codes only as hashes.
struct DeviceAuthorization: Sendable, Equatable {
    enum Status: String, Sendable {
        /// Waiting for the user to enter the code and decide.
        case pending
        /// The user approved: the next poll gets tokens.
        case approved
        /// The user denied: every poll hears `access_denied`.
        case denied
        /// Redeemed for tokens, once.
        case used
    }

    /// SHA-256 of the device code, the row's key.
    let id: String
    let clientID: String
    let scopes: [String]
    var status: Status
    var userID: String?
    var sessionID: String?
    var acr: ACR?
    var amr: [String]
    /// When the user last proved who they are (ms).
    var authTime: Int64?
    /// Seconds the device must leave between polls; raised by 5 at each `slow_down` (§3.5).
    var interval: Int
    var lastPolledAt: Int64?
    let expiresAt: Int64
    let createdAt: Int64
}
