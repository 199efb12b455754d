import Core
import Crypto
import Testing

@Suite("Signing keys and ECDSA signature forms")
struct SigningKeyTests {
    /// The P-256 key of RFC 7515 Appendix A.3 in the SEC1 form (RFC 5915)
    /// that `P256SigningKey.pkcs8()` wrote before it wrote PKCS#8.
    static let rfcSEC1 = Hex.decode(
        "307702010104208e9b109e719098bf980487df1f5d77e9cb29606ebed2263b5f57c213df84f4b2a00a06082a8648ce3d030107a1440342"
            + "00047fcdce2770f6c45d4183cbee6fdb4b7b580733357be9ef13bacf6e3c7bd15445c7f144cd1bbd9b7e872cdfedb9eeb9f4b3695d"
            + "6ea90b24ad8a4623288588e5ad")!

    @Test("a P-256 key in the SEC1 form of earlier versions still loads, with the RFC 7515 A.3 public point")
    func legacySEC1() throws {
        let key = try P256SigningKey(pkcs8: SecureBytes(Self.rfcSEC1))
        let point = try key.publicCoordinates()
        #expect(Base64URL.encode(point.x) == "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU")
        #expect(Base64URL.encode(point.y) == "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        // What it writes now is PKCS#8 PrivateKeyInfo, and reads back as the same key.
        let der = try key.pkcs8()
        #expect(der.withUnsafeBytes { Array($0.prefix(7)) } == [0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30])
        #expect(try P256SigningKey(pkcs8: der).subjectPublicKeyInfo == key.subjectPublicKeyInfo)
    }

    @Test("a P-256 key's coordinates rebuild its public key")
    func p256Coordinates() throws {
        let key = try P256SigningKey.generate()
        let point = try key.publicCoordinates()
        let rebuilt = try PublicKey(p256X: point.x, y: point.y)
        #expect(rebuilt.canonicalSubjectPublicKeyInfo == key.subjectPublicKeyInfo)
    }

    @Test("ECDSA signatures convert between DER and raw R || S and still verify")
    func ecdsaForms() throws {
        let key = try P256SigningKey.generate()
        let point = try key.publicCoordinates()
        let verifier = try PublicKey(p256X: point.x, y: point.y)
        let message = Array("signed".utf8)
        for _ in 0..<8 {  // R or S shorter than 32 bytes comes up now and then; both must pad.
            let der = try key.signature(for: message)
            let raw = try #require(ECDSASignature.raw(fromDER: der))
            #expect(raw.count == 64)
            #expect(ECDSASignature.der(fromRaw: raw) == der)
            #expect(verifier.isValidSignature(try #require(ECDSASignature.der(fromRaw: raw)), for: message))
        }
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 63)) == nil)
        #expect(ECDSASignature.der(fromRaw: [UInt8](repeating: 1, count: 65)) == nil)
        let der = try key.signature(for: message)
        #expect(ECDSASignature.raw(fromDER: der + [0]) == nil)
        #expect(ECDSASignature.raw(fromDER: [UInt8](repeating: 1, count: 64)) == nil)
    }

    @Test("a generated RSA key survives PKCS#8, and its RS256 signatures verify under its modulus and exponent")
    func rsaKeys() throws {
        let key = try RSASigningKey.generate(bits: 2048)
        let numbers = try key.publicComponents()
        #expect(numbers.modulus.count == 256 && numbers.modulus[0] >= 0x80 && numbers.exponent == [1, 0, 1])
        let restored = try RSASigningKey(pkcs8: try key.pkcs8())
        let verifier = try PublicKey(rsaModulus: numbers.modulus, exponent: numbers.exponent)
        let message = Array("signed".utf8)
        #expect(verifier.kind == .rsa(bits: 2048))
        #expect(verifier.isValidSignature(try restored.signature(for: message), for: message))
        #expect(try restored.publicComponents().modulus == numbers.modulus)
        #expect(throws: OpenSSLError.self) { try RSASigningKey.generate(bits: 1024) }
        #expect(throws: OpenSSLError.self) { try RSASigningKey(pkcs8: SecureBytes(Self.rfcSEC1)) }
        #expect(throws: OpenSSLError.self) { try P256SigningKey(pkcs8: try key.pkcs8()) }
    }
}
