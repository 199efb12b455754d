import Testing
import WebAuthn

@Suite("Authenticator data and error codes")
struct AuthenticatorDataTests {
    @Test("flags, counter and attested credential data are read from the none.ES256 vector")
    func parse() throws {
        let data = try AuthenticatorData(attestationParts(W3C.noneES256.attestationObject).authData)
        #expect(data.flags == 0x59)
        #expect(
            data.userPresent && !data.userVerified && data.backupEligible && data.backedUp
                && data.hasAttestedCredentialData)
        #expect(data.signCount == 0)
        #expect(data.rpIDHash == [UInt8](hex: "bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b5"))
        #expect(data.aaguid == [UInt8](hex: W3C.noneES256.aaguid))
        #expect(data.credentialID == [UInt8](hex: W3C.noneES256.credentialID))
        #expect(data.credentialPublicKey?.algorithm == .es256)
    }

    @Test("a big-endian counter and extension data after the header are read; other trailing bytes are not")
    func extensions() throws {
        let header = [UInt8](repeating: 0x11, count: 32) + [0x81, 0x01, 0x02, 0x03, 0x04]  // UP | ED
        let extensions: [UInt8] = [0xa1, 0x6b] + Array("credProtect".utf8) + [0x02]
        let data = try AuthenticatorData(header + extensions)
        #expect(data.signCount == 0x0102_0304 && data.credentialID == nil)
        #expect(reason { try AuthenticatorData(header) } == .malformed)
        #expect(reason { try AuthenticatorData(header + extensions + [0]) } == .malformed)
        #expect(reason { try AuthenticatorData(header + [0x01]) } == .malformed)  // extensions not a map
        var plain = header
        plain[32] = 0x01
        #expect(reason { try AuthenticatorData(plain + [0]) } == .malformed)
        #expect(reason { try AuthenticatorData(Array(plain.dropLast())) } == .malformed)
    }

    @Test("a credential ID length past the end is malformed")
    func truncatedCredential() {
        let header =
            [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0x00, 0x40] + [
                1, 2, 3,
            ]
        #expect(reason { try AuthenticatorData(header) } == .malformed)
    }

    @Test("CBOR declaring far more elements or bytes than it holds is malformed")
    func hugeDeclaredLengths() {
        for bytes: [UInt8] in [
            [0x9a, 0x0f, 0xff, 0xff, 0xff], [0xbb, 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0x5a, 0xff, 0xff, 0xff, 0xff], [0xa1, 0x61, 0x61], [0x9f, 0x01],
        ] {
            #expect(reason { try CredentialPublicKey(cose: bytes) } == .malformed)
        }
    }

    @Test("wire codes are stable")
    func wireCodes() {
        let codes = WebAuthnError.Reason.allCases.map(\.rawValue)
        #expect(
            codes == [
                "malformed", "wrong_type", "challenge_mismatch", "origin_mismatch", "rp_id_mismatch",
                "user_not_present",
                "user_not_verified", "backup_state_inconsistent", "algorithm_not_allowed", "unsupported_attestation",
                "bad_signature", "credential_too_long", "sign_count_regression", "unsupported_key",
            ])
    }

    @Test("descriptions are one short sentence and leak no detail; equality ignores the detail")
    func descriptions() {
        for reason in WebAuthnError.Reason.allCases {
            let error = WebAuthnError(reason, detail: "secret internals")
            #expect(!error.description.contains("secret") && error.description.hasSuffix("."))
            #expect(error.debugDescription.contains("secret"))
            #expect(error == WebAuthnError(reason))
        }
    }
}
