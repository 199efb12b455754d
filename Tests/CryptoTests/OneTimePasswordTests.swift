import Crypto
import Foundation
import Testing

@Suite("HOTP and TOTP known answers")
struct OneTimePasswordTests {
    @Test("RFC 4226 appendix D: HOTP values for counters 0 to 9")
    func hotp() {
        let secret = Array("12345678901234567890".utf8)
        let expected = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
        ]
        #expect(
            (0..<10).map { OneTimePassword.hotp(secret: secret, counter: UInt64($0), digits: 6, algorithm: .sha1) }
                == expected)
    }

    @Test(
        "RFC 6238 appendix B: TOTP values for SHA1, SHA256 and SHA512",
        arguments: [
            (59.0, "94287082", "46119246", "90693936"),
            (1_111_111_109.0, "07081804", "68084774", "25091201"),
            (1_111_111_111.0, "14050471", "67062674", "99943326"),
            (1_234_567_890.0, "89005924", "91819424", "93441116"),
            (2_000_000_000.0, "69279037", "90698825", "38618901"),
            (20_000_000_000.0, "65353130", "77737706", "47863826"),
        ])
    func totp(time: Double, sha1: String, sha256: String, sha512: String) {
        let step = OneTimePassword.step(unixTime: time, period: 30)
        #expect(
            OneTimePassword.hotp(secret: Array("12345678901234567890".utf8), counter: step, digits: 8, algorithm: .sha1)
                == sha1)
        #expect(
            OneTimePassword.hotp(
                secret: Array("12345678901234567890123456789012".utf8), counter: step, digits: 8, algorithm: .sha256)
                == sha256)
        #expect(
            OneTimePassword.hotp(
                secret: Array("1234567890123456789012345678901234567890123456789012345678901234".utf8), counter: step,
                digits: 8, algorithm: .sha512) == sha512)
    }

    @Test("RFC 4231 test case 2: HMAC-SHA256 known answer")
    func hmac() {
        let mac = HMAC.authenticate(
            Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8), algorithm: .sha256)
        #expect(
            mac.map { String(format: "%02x", $0) }.joined()
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("an empty key and message give the published HMAC-SHA256 of nothing")
    func emptyKey() {
        let mac = HMAC.authenticate([], key: [], algorithm: .sha256)
        #expect(
            mac.map { String(format: "%02x", $0) }.joined()
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}

@Suite("AES-256-GCM sealed boxes")
struct SealedBoxTests {
    @Test("a sealed value opens with the same key and associated data only")
    func roundTrip() throws {
        let box = try SealedBox(key: SecureRandom.bytes(32))
        let sealed = try box.seal(Array("JBSWY3DPEHPK3PXP".utf8), associatedData: Array("factor-1".utf8))
        #expect(sealed.count == 12 + 16 + 16)
        #expect(try box.open(sealed, associatedData: Array("factor-1".utf8)) == Array("JBSWY3DPEHPK3PXP".utf8))
        #expect(throws: SealedBox.Failure.authenticationFailed) {
            try box.open(sealed, associatedData: Array("factor-2".utf8))
        }
        var tampered = sealed
        tampered[14] ^= 1
        #expect(throws: SealedBox.Failure.authenticationFailed) {
            try box.open(tampered, associatedData: Array("factor-1".utf8))
        }
        let other = try SealedBox(key: SecureRandom.bytes(32))
        #expect(throws: SealedBox.Failure.authenticationFailed) {
            try other.open(sealed, associatedData: Array("factor-1".utf8))
        }
        #expect(throws: SealedBox.Failure.invalidKey) { try SealedBox(key: [1, 2, 3]) }
    }

    @Test("the same plaintext seals differently each time (fresh nonce)")
    func nonces() throws {
        let box = try SealedBox(key: SecureRandom.bytes(32))
        #expect(try box.seal([1, 2, 3], associatedData: []) != (try box.seal([1, 2, 3], associatedData: [])))
    }
}

@Suite("ES256 device keys")
struct ECDSATests {
    // Made with: openssl ecparam -name prime256v1 -genkey; openssl pkey -pubout -outform DER; openssl dgst -sha256 -sign
    static let spki =
        "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEgW9W5dMAcL0f0S+TRqJQr6IKJUNutuFn1eoH+dMgxJ4DqALvFwLOaEnfEcDre708rC1kb0htxrSPpK3s8gPrDw=="
    static let signature =
        "MEUCIFmH2yXu8xQO1GgOACSWZCI15/H8LQzEywSaXCvobpUxAiEA+xjICYpwkbHKFp6pZCBOaw98lDctEfw42SDOtFjraOM="

    @Test("a signature made by OpenSSL verifies; a changed message or signature does not")
    func knownAnswer() throws {
        let key = try ECDSAPublicKey(subjectPublicKeyInfo: Array(Data(base64Encoded: Self.spki)!))
        let sig = Array(Data(base64Encoded: Self.signature)!)
        #expect(key.isValidSignature(sig, for: Array("trifactor known answer".utf8)))
        #expect(!key.isValidSignature(sig, for: Array("trifactor known answeR".utf8)))
        var tampered = sig
        tampered[10] ^= 1
        #expect(!key.isValidSignature(tampered, for: Array("trifactor known answer".utf8)))
        #expect(!key.isValidSignature([], for: []))
    }

    @Test("keys that are not P-256 SubjectPublicKeyInfo are refused")
    func refusal() {
        #expect(throws: ECDSAPublicKey.Failure.notSubjectPublicKeyInfo) {
            try ECDSAPublicKey(subjectPublicKeyInfo: [1, 2, 3])
        }
        // An Ed25519 key: valid SPKI, wrong algorithm.
        let ed25519 = Array(Data(base64Encoded: "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=")!)
        #expect(throws: ECDSAPublicKey.Failure.notP256) { try ECDSAPublicKey(subjectPublicKeyInfo: ed25519) }
    }
}
