import Testing

@testable import WebAuthn

@Suite("Registration checks (§7.1)")
struct RegistrationTests {
    let v = W3C.noneES256

    /// Verifies `v`'s registration with one part replaced.
    func register(
        clientDataJSON: [UInt8]? = nil, attestationObject: [UInt8]? = nil, challenge: [UInt8]? = nil,
        rp: RelyingParty = exampleRP,
        requireUV: Bool = false, allowed: Set<COSEAlgorithm> = [.es256, .edDSA, .rs256]
    ) throws -> RegistrationResult {
        try WebAuthnVerifier.verifyRegistration(
            clientDataJSON: clientDataJSON ?? [UInt8](hex: v.registrationClientDataJSON),
            attestationObject: attestationObject ?? [UInt8](hex: v.attestationObject),
            expectedChallenge: challenge ?? [UInt8](hex: v.registrationChallenge), rp: rp,
            requireUserVerification: requireUV, allowedAlgorithms: allowed)
    }

    /// `v`'s authData with its flags replaced, wrapped as `fmt: none`.
    func withFlags(_ flags: UInt8) -> [UInt8] {
        var authData = attestationParts(v.attestationObject).authData
        authData[32] = flags
        return CBORWriter.attestationObject(fmt: "none", authData: authData)
    }

    /// A `none` registration whose credential ID has `length` bytes, reusing `v`'s key.
    func withCredentialID(length: Int) -> [UInt8] {
        let original = attestationParts(v.attestationObject).authData
        let key = Array(original[(37 + 18 + 32)...])
        let id = [UInt8](repeating: 0xab, count: length)
        let authData =
            Array(original[0..<37]) + [UInt8](repeating: 0, count: 16) + [UInt8(length >> 8), UInt8(length & 0xff)] + id
            + key
        return CBORWriter.attestationObject(fmt: "none", authData: authData)
    }

    @Test("the ceremony type must be webauthn.create")
    func wrongType() {
        let json = clientDataJSON(type: "webauthn.get", challenge: [UInt8](hex: v.registrationChallenge))
        #expect(reason { try register(clientDataJSON: json) } == .wrongType)
        #expect(
            reason {
                try register(
                    clientDataJSON: [UInt8](hex: v.clientDataJSON), challenge: [UInt8](hex: v.assertionChallenge))
            } == .wrongType)
    }

    @Test("a different challenge is refused")
    func challengeMismatch() {
        var challenge = [UInt8](hex: v.registrationChallenge)
        challenge[0] ^= 1
        #expect(reason { try register(challenge: challenge) } == .challengeMismatch)
        #expect(reason { try register(challenge: Array(challenge.dropLast())) } == .challengeMismatch)
    }

    @Test("an origin outside the relying party's set is refused")
    func wrongOrigin() {
        let rp = RelyingParty(
            id: "example.org", name: "Example", origins: ["https://www.example.org", "http://example.org"])
        #expect(reason { try register(rp: rp) } == .originMismatch)
    }

    @Test("an authenticator scoped to another RP ID is refused")
    func wrongRPID() {
        let rp = RelyingParty(id: "example.com", name: "Example", origins: ["https://example.org"])
        #expect(reason { try register(rp: rp) } == .rpIDMismatch)
    }

    @Test("UP must be set, UV when required, and BS only with BE")
    func flags() throws {
        #expect(reason { try register(attestationObject: withFlags(0x40)) } == .userNotPresent)
        #expect(reason { try register(requireUV: true) } == .userNotVerified)  // vector flags 0x59: no UV
        #expect(try register(attestationObject: withFlags(0x45), requireUV: true).userVerified)
        #expect(reason { try register(attestationObject: withFlags(0x51)) } == .backupStateInconsistent)
        #expect(reason { try register(attestationObject: withFlags(0x01)) } == .malformed)  // no AT: trailing data
        var bare = Array(attestationParts(v.attestationObject).authData[0..<37])
        bare[32] = 0x19  // UP, BE, BS; no attested credential data
        let noCredential = CBORWriter.attestationObject(fmt: "none", authData: bare)
        #expect(reason { try register(attestationObject: noCredential) } == .malformed)
    }

    @Test("credential IDs up to 1023 bytes are accepted, longer ones refused")
    func credentialIDLength() throws {
        #expect(try register(attestationObject: withCredentialID(length: 1023)).credentialID.count == 1023)
        #expect(reason { try register(attestationObject: withCredentialID(length: 1024)) } == .credentialTooLong)
    }

    @Test("an algorithm outside the allowed set is refused")
    func disallowedAlgorithm() {
        #expect(reason { try register(allowed: [.edDSA, .rs256]) } == .algorithmNotAllowed)
    }

    @Test("none must carry an empty statement; unknown formats are unsupported")
    func formats() {
        let authData = attestationParts(v.attestationObject).authData
        let stuffed = CBORWriter.attestationObject(
            fmt: "none", statement: [.init(key: .text("sig"), value: .bytes([1]))], authData: authData)
        #expect(reason { try register(attestationObject: stuffed) } == .malformed)
        for fmt in ["tpm", "android-key", "fido-u2f", "apple", "android-safetynet"] {
            #expect(
                reason { try register(attestationObject: CBORWriter.attestationObject(fmt: fmt, authData: authData)) }
                    == .unsupportedAttestation)
        }
    }

    @Test("packed self attestation with a wrong signature or algorithm is refused")
    func packedSelfTampered() {
        let s = W3C.packedSelfES256
        let parts = attestationParts(s.attestationObject)
        func attempt(_ statement: [CBOR.Entry]) -> WebAuthnError.Reason? {
            reason {
                try WebAuthnVerifier.verifyRegistration(
                    clientDataJSON: [UInt8](hex: s.registrationClientDataJSON),
                    attestationObject: CBORWriter.attestationObject(
                        fmt: "packed", statement: statement, authData: parts.authData),
                    expectedChallenge: [UInt8](hex: s.registrationChallenge), rp: exampleRP,
                    requireUserVerification: false)
            }
        }
        guard case .bytes(var signature)? = CBOR.map(parts.statement)[text: "sig"] else {
            Issue.record("no sig")
            return
        }
        #expect(attempt(parts.statement) == nil)
        signature[signature.count - 1] ^= 0x01
        #expect(
            attempt([
                .init(key: .text("alg"), value: CBORWriter.int(-7)), .init(key: .text("sig"), value: .bytes(signature)),
            ]) == .badSignature)
        #expect(attempt([.init(key: .text("alg"), value: CBORWriter.int(-257)), parts.statement[1]]) == .badSignature)
        #expect(attempt([parts.statement[0]]) == .malformed)
        #expect(
            attempt(parts.statement + [.init(key: .text("x5c"), value: .array([.bytes([0x30])]))])
                == .unsupportedAttestation)
    }

    @Test("attestation objects that are not the expected CBOR map are malformed")
    func malformedObjects() {
        #expect(reason { try register(attestationObject: []) } == .malformed)
        #expect(reason { try register(attestationObject: [0xa1, 0x63]) } == .malformed)
        #expect(reason { try register(attestationObject: [UInt8](hex: v.attestationObject) + [0]) } == .malformed)
        #expect(
            reason {
                try register(
                    attestationObject: CBORWriter.encode(.map([.init(key: .text("fmt"), value: .text("none"))])))
            } == .malformed)
        #expect(reason { try register(clientDataJSON: Array("not json".utf8)) } == .malformed)
    }
}
