/// What the server expects of a ceremony: its RP ID and the exact origins
/// (scheme://host[:port]) allowed to run it.
public struct RelyingParty: Sendable {
    /// The RP ID, e.g. `example.org`; authenticators sign its SHA-256.
    public let id: String
    /// A human-readable name shown by authenticators.
    public let name: String
    /// Origins allowed in clientDataJSON, compared exactly.
    public let origins: Set<String>

    /// A relying party with the given RP ID, display name and allowed origins.
    public init(id: String, name: String, origins: Set<String>) {
        self.id = id
        self.name = name
        self.origins = origins
    }
}

/// A verified registration: what the server stores for the new credential.
public struct RegistrationResult: Sendable {
    /// The credential ID (at most 1023 bytes).
    public let credentialID: [UInt8]
    /// The credential public key (store `publicKey.cose`).
    public let publicKey: CredentialPublicKey
    /// The initial signature counter.
    public let signCount: UInt32
    /// BE: whether the credential may be backed up (fixed for its lifetime).
    public let backupEligible: Bool
    /// BS: whether it is backed up now.
    public let backedUp: Bool
    /// Whether the user was verified during registration.
    public let userVerified: Bool
    /// The authenticator model's AAGUID (16 bytes; zeros when not disclosed).
    public let aaguid: [UInt8]
    /// The attestation statement format: `none` or `packed` (self attestation).
    public let format: String
}

/// A verified assertion: what the server updates on the stored credential.
public struct AssertionResult: Sendable {
    /// The new signature counter to store.
    public let signCount: UInt32
    /// UV: the user was verified.
    public let userVerified: Bool
    /// BS: the credential is backed up now.
    public let backedUp: Bool
}
