import Crypto
import Foundation
import Testing

@Suite("Passphrase seals and software P-256 keys")
struct PassphraseSealTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    @Test("XChaCha20-Poly1305 opens draft-irtf-cfrg-xchacha's test vector (A.3.1), and refuses it with one bit changed")
    func xchachaKnownAnswer() throws {
        let key = SecureBytes(Self.bytes("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"))
        let nonce = Self.bytes("404142434445464748494a4b4c4d4e4f5051525354555657")
        let aad = Self.bytes("50515253c0c1c2c3c4c5c6c7")
        let ciphertext = Self.bytes(
            """
            bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452\
            2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e
            """)
        let tag = Self.bytes("c0875924c1c7987947deafd8780acf49")
        let plain = try PassphraseSeal.open(nonce + ciphertext + tag, key: key, associatedData: aad)
        let text = plain.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(
            text
                == "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
        )
        var changed = nonce + ciphertext + tag
        changed[30] ^= 1
        #expect(throws: PassphraseSeal.Failure.authenticationFailed) {
            try PassphraseSeal.open(changed, key: key, associatedData: aad)
        }
        #expect(throws: PassphraseSeal.Failure.authenticationFailed) {
            try PassphraseSeal.open(nonce + ciphertext + tag, key: key, associatedData: [])
        }
        #expect(throws: PassphraseSeal.Failure.truncated) { try PassphraseSeal.open(Array(nonce.prefix(10)), key: key) }
    }

    @Test("a seal opens with its key, never with another, and each seal has a fresh nonce")
    func sealRoundTrip() throws {
        let key = try PassphraseSeal.deriveKey(
            passphrase: SecureBytes(Array("passphrase".utf8)), salt: Array(repeating: 7, count: 16), opsLimit: 1,
            memLimit: 8 << 20)
        let same = try PassphraseSeal.deriveKey(
            passphrase: SecureBytes(Array("passphrase".utf8)), salt: Array(repeating: 7, count: 16), opsLimit: 1,
            memLimit: 8 << 20)
        let other = try PassphraseSeal.deriveKey(
            passphrase: SecureBytes(Array("passphrasf".utf8)), salt: Array(repeating: 7, count: 16), opsLimit: 1,
            memLimit: 8 << 20)
        #expect(key == same)
        #expect(key != other)
        let a = PassphraseSeal.seal(SecureBytes(Array("secret".utf8)), key: key)
        let b = PassphraseSeal.seal(SecureBytes(Array("secret".utf8)), key: key)
        #expect(a != b)
        #expect(try PassphraseSeal.open(a, key: same) == SecureBytes(Array("secret".utf8)))
        #expect(throws: PassphraseSeal.Failure.authenticationFailed) { try PassphraseSeal.open(a, key: other) }
        #expect(throws: PassphraseSeal.Failure.derivationFailed) {
            try PassphraseSeal.deriveKey(passphrase: SecureBytes([1]), salt: [1, 2, 3], opsLimit: 1, memLimit: 8 << 20)
        }
    }

    @Test("a software P-256 key survives PKCS#8, and its ES256 signatures verify under its SubjectPublicKeyInfo")
    func p256() throws {
        let key = try P256SigningKey.generate()
        let restored = try P256SigningKey(pkcs8: try key.pkcs8())
        #expect(restored.subjectPublicKeyInfo == key.subjectPublicKeyInfo)
        #expect(key.subjectPublicKeyInfo.count == 91)
        let message = Array("trifactor-device-signature-v1".utf8)
        let signature = try restored.signature(for: message)
        let verifier = try ECDSAPublicKey(subjectPublicKeyInfo: key.subjectPublicKeyInfo)
        #expect(verifier.isValidSignature(signature, for: message))
        #expect(!verifier.isValidSignature(signature, for: message + [1]))
        #expect(throws: OpenSSLError.self) { try P256SigningKey(pkcs8: SecureBytes([0x30, 0x03, 0x02, 0x01, 0x00])) }
    }
}
