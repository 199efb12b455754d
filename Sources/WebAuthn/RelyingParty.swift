/// What the server expects of a ceremony: its RP ID and the exact origins
/// (scheme://host[:port]) allowed to run it.
package struct RelyingParty: Sendable {
    /// The RP ID, e.g. `example.org`; authenticators sign its SHA-256.
    package let id: String
    /// A human-readable name shown by authenticators.
    package let name: String
    /// Origins allowed in clientDataJSON, compared exactly.
    package let origins: Set<String>
    /// Whether `http://localhost:<any port>` is allowed too (development only).
    package let allowsAnyLocalhostPort: Bool

    /// A relying party with the given RP ID, display name and allowed origins.
    /// - Important: `allowsAnyLocalhostPort` is for development: any program
    ///   listening on a local port could then run ceremonies.
    package init(id: String, name: String, origins: Set<String>, allowsAnyLocalhostPort: Bool = false) {
        self.id = id
        self.name = name
        self.origins = origins
        self.allowsAnyLocalhostPort = allowsAnyLocalhostPort
    }

    /// Whether clientDataJSON may name `origin`.
    func allows(origin: String) -> Bool {
        if origins.contains(origin) { return true }
        guard allowsAnyLocalhostPort, origin.hasPrefix("http://localhost:") else { return false }
        let port = origin.utf8.dropFirst("http://localhost:".utf8.count)
        return (1...5).contains(port.count) && port.allSatisfy { (0x30...0x39).contains($0) }
    }
}

/// An assertion whose form and relying-party checks passed (client data
/// type, origin and `crossOrigin`; authenticator data layout, RP ID hash and
/// flags): what remains needs stored state, the challenge that was issued
/// and the credential's key and counter. Made by
/// `WebAuthnVerifier.parseAssertion`, before any database work.
package struct ParsedAssertion: Sendable {
    /// The challenge the client data names (compare it with the issued one).
    package let challenge: [UInt8]
    let clientDataJSON: [UInt8]
    let authenticatorData: [UInt8]
    let authData: AuthenticatorData
    let signature: [UInt8]
}

/// A verified registration: what the server stores for the new credential.
package struct RegistrationResult: Sendable {
    /// The credential ID (at most 1023 bytes).
    package let credentialID: [UInt8]
    /// The credential public key (store `publicKey.cose`).
    package let publicKey: CredentialPublicKey
    /// The initial signature counter.
    package let signCount: UInt32
    /// BE: whether the credential may be backed up (fixed for its lifetime).
    package let backupEligible: Bool
    /// BS: whether it is backed up now.
    package let backedUp: Bool
    /// Whether the user was verified during registration.
    package let userVerified: Bool
    /// The authenticator model's AAGUID (16 bytes; zeros when not disclosed).
    package let aaguid: [UInt8]
    /// The attestation statement format: `none` or `packed` (self attestation).
    package let format: String
}

/// A verified assertion: what the server updates on the stored credential.
package struct AssertionResult: Sendable {
    /// The new signature counter to store.
    package let signCount: UInt32
    /// UV: the user was verified.
    package let userVerified: Bool
    /// BS: the credential is backed up now.
    package let backedUp: Bool
}
