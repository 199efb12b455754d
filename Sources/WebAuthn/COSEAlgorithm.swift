/// The COSE signature algorithms a credential may use (IANA COSE registry).
package enum COSEAlgorithm: Int, Sendable, CaseIterable {
    /// ECDSA on P-256 with SHA-256; signatures are DER-encoded.
    case es256 = -7
    /// EdDSA; only Ed25519 (pure) is accepted.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = -257
}
