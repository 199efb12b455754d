import Testing
import WebAuthn

@Suite("Assertion checks (§7.2)")
struct AssertionTests {
    let v = W3C.noneES256

    func key() throws -> CredentialPublicKey {
        try #require(try AuthenticatorData(attestationParts(v.attestationObject).authData).credentialPublicKey)
    }

    /// Verifies `v`'s assertion with one part replaced.
    func assert(
        clientDataJSON: [UInt8]? = nil, authenticatorData: [UInt8]? = nil, signature: [UInt8]? = nil,
        challenge: [UInt8]? = nil,
        rp: RelyingParty = exampleRP, stored: UInt32 = 0, requireUV: Bool = false
    ) throws -> AssertionResult {
        try WebAuthnVerifier.verifyAssertion(
            clientDataJSON: clientDataJSON ?? [UInt8](hex: v.clientDataJSON),
            authenticatorData: authenticatorData ?? [UInt8](hex: v.authenticatorData),
            signature: signature ?? [UInt8](hex: v.signature),
            expectedChallenge: challenge ?? [UInt8](hex: v.assertionChallenge),
            rp: rp, publicKey: try key(), storedSignCount: stored, requireUserVerification: requireUV)
    }

    func withFlags(_ flags: UInt8) -> [UInt8] {
        var authData = [UInt8](hex: v.authenticatorData)
        authData[32] = flags
        return authData
    }

    @Test("zero stored and zero received counters are accepted (authenticator without a counter)")
    func zeroCounters() throws {
        #expect(try assert(stored: 0).signCount == 0)
    }

    @Test("a received counter of zero after a stored non-zero counter is a regression")
    func counterRegression() {
        #expect(reason { try assert(stored: 5) } == .signCountRegression)
    }

    @Test("a tampered signature, authenticator data or client data fails the signature check")
    func tampered() {
        var signature = [UInt8](hex: v.signature)
        signature[signature.count - 1] ^= 0x01
        #expect(reason { try assert(signature: signature) } == .badSignature)
        #expect(reason { try assert(signature: Array(signature.dropLast())) } == .badSignature)
        var counter = [UInt8](hex: v.authenticatorData)
        counter[36] = 9
        #expect(reason { try assert(authenticatorData: counter) } == .badSignature)
        var json = [UInt8](hex: v.clientDataJSON)
        json.insert(0x20, at: 1)  // same meaning, different bytes
        #expect(reason { try assert(clientDataJSON: json) } == .badSignature)
    }

    @Test("a signature made by another credential does not verify")
    func otherKey() throws {
        let other = try #require(
            try AuthenticatorData(attestationParts(W3C.packedSelfES256.attestationObject).authData).credentialPublicKey)
        #expect(
            reason {
                try WebAuthnVerifier.verifyAssertion(
                    clientDataJSON: [UInt8](hex: v.clientDataJSON),
                    authenticatorData: [UInt8](hex: v.authenticatorData),
                    signature: [UInt8](hex: v.signature), expectedChallenge: [UInt8](hex: v.assertionChallenge),
                    rp: exampleRP,
                    publicKey: other, storedSignCount: 0, requireUserVerification: false)
            } == .badSignature)
    }

    @Test("the ceremony type must be webauthn.get")
    func wrongType() {
        #expect(
            reason {
                try assert(
                    clientDataJSON: [UInt8](hex: v.registrationClientDataJSON),
                    challenge: [UInt8](hex: v.registrationChallenge))
            } == .wrongType)
    }

    @Test("a different challenge is refused")
    func challengeMismatch() {
        #expect(reason { try assert(challenge: [UInt8](hex: v.registrationChallenge)) } == .challengeMismatch)
        #expect(reason { try assert(challenge: []) } == .challengeMismatch)
    }

    @Test("an origin outside the relying party's set is refused, and crossOrigin true too")
    func wrongOrigin() {
        let rp = RelyingParty(id: "example.org", name: "Example", origins: ["https://evil.example"])
        #expect(reason { try assert(rp: rp) } == .originMismatch)
        let json = clientDataJSON(
            type: "webauthn.get", challenge: [UInt8](hex: v.assertionChallenge), crossOrigin: true)
        #expect(reason { try assert(clientDataJSON: json) } == .originMismatch)
    }

    @Test("an assertion for another RP ID is refused")
    func wrongRPID() {
        let rp = RelyingParty(id: "login.example.org", name: "Example", origins: ["https://example.org"])
        #expect(reason { try assert(rp: rp) } == .rpIDMismatch)
    }

    @Test("UP must be set, UV when required, and BS only with BE")
    func flags() {
        #expect(reason { try assert(authenticatorData: withFlags(0x18)) } == .userNotPresent)
        #expect(reason { try assert(requireUV: true) } == .userNotVerified)  // vector flags 0x19: no UV
        #expect(reason { try assert(authenticatorData: withFlags(0x11)) } == .backupStateInconsistent)
    }

    @Test("truncated authenticator data is malformed")
    func truncated() {
        #expect(
            reason { try assert(authenticatorData: Array([UInt8](hex: v.authenticatorData).dropLast())) } == .malformed)
    }
}
