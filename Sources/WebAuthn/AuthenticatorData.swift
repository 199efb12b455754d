/// The authenticator data (WebAuthn §6.1): RP ID hash, flags, signature
/// counter, and during registration the attested credential data.
package struct AuthenticatorData: Sendable {
    /// SHA-256 of the RP ID the authenticator used (32 bytes).
    package let rpIDHash: [UInt8]
    /// The flags byte.
    package let flags: UInt8
    /// The signature counter (0 when the authenticator keeps none).
    package let signCount: UInt32
    /// The authenticator model's AAGUID (16 bytes), when credential data is attested.
    package let aaguid: [UInt8]?
    /// The credential ID, when credential data is attested.
    package let credentialID: [UInt8]?
    /// The credential public key, when credential data is attested.
    package let credentialPublicKey: CredentialPublicKey?

    /// Flag bits.
    enum Flag {
        static let userPresent: UInt8 = 0x01
        static let userVerified: UInt8 = 0x04
        static let backupEligible: UInt8 = 0x08
        static let backedUp: UInt8 = 0x10
        static let attestedCredentialData: UInt8 = 0x40
        static let extensionData: UInt8 = 0x80
    }

    /// UP: the user was present (bit 0).
    package var userPresent: Bool { flags & Flag.userPresent != 0 }
    /// UV: the user was verified (bit 2).
    package var userVerified: Bool { flags & Flag.userVerified != 0 }
    /// BE: the credential may be backed up (bit 3).
    package var backupEligible: Bool { flags & Flag.backupEligible != 0 }
    /// BS: the credential is backed up (bit 4).
    package var backedUp: Bool { flags & Flag.backedUp != 0 }
    /// AT: attested credential data follows the counter (bit 6).
    package var hasAttestedCredentialData: Bool { flags & Flag.attestedCredentialData != 0 }
    /// ED: extension data follows (bit 7).
    package var hasExtensionData: Bool { flags & Flag.extensionData != 0 }

    /// Parses authenticator data.
    ///
    /// With AT set, the attested credential data is parsed (AAGUID, 2-byte
    /// big-endian length, credential ID, one CBOR COSE_Key). With ED set, one
    /// CBOR extensions map must follow and is otherwise ignored. No other
    /// bytes may follow.
    /// - Throws: `.malformed` when the layout is wrong; the key's own errors
    ///   (`.malformed`, `.unsupportedKey`) from `CredentialPublicKey`.
    package init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else {
            throw WebAuthnError(.malformed, detail: "authenticator data shorter than 37 bytes")
        }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = 37
        if flags & Flag.attestedCredentialData != 0 {
            guard bytes.count >= offset + 18 else {
                throw WebAuthnError(.malformed, detail: "attested credential data truncated")
            }
            aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length > 0, bytes.count >= offset + length else {
                throw WebAuthnError(.malformed, detail: "credential ID truncated")
            }
            credentialID = Array(bytes[offset..<offset + length])
            offset += length
            guard offset < bytes.count else { throw WebAuthnError(.malformed, detail: "credential public key missing") }
            let (_, keyLength) = try CBOR.decodePrefix(bytes[offset...])
            credentialPublicKey = try CredentialPublicKey(cose: Array(bytes[offset..<offset + keyLength]))
            offset += keyLength
        } else {
            aaguid = nil
            credentialID = nil
            credentialPublicKey = nil
        }
        if flags & Flag.extensionData != 0 {
            guard offset < bytes.count else { throw WebAuthnError(.malformed, detail: "extension data missing") }
            let (extensions, length) = try CBOR.decodePrefix(bytes[offset...])
            guard case .map = extensions else { throw WebAuthnError(.malformed, detail: "extensions are not a map") }
            offset += length
        }
        guard offset == bytes.count else {
            throw WebAuthnError(.malformed, detail: "trailing bytes after authenticator data")
        }
    }
}
