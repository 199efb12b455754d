import Testing

@testable import WebAuthn

@Suite("COSE_Key parsing")
struct COSEKeyTests {
    static func cose(_ pairs: [(Int, CBOR)]) -> [UInt8] {
        CBORWriter.encode(.map(pairs.map { CBOR.Entry(key: CBORWriter.int($0.0), value: $0.1) }))
    }

    /// The ES256 key of the none.ES256 vector.
    static var es256X: [UInt8] { [UInt8](hex: "afefa16f97ca9b2d23eb86ccb64098d20db90856062eb249c33a9b672f26df61") }
    static var es256Y: [UInt8] { [UInt8](hex: "930a56b87a2fca66334b03458abf879717c12cc68ed73290af2e2664796b9220") }

    @Test("an EC2 P-256 ES256 key parses and keeps its COSE bytes")
    func es256() throws {
        let bytes = Self.cose([
            (1, .unsigned(2)), (3, CBORWriter.int(-7)), (-1, .unsigned(1)), (-2, .bytes(Self.es256X)),
            (-3, .bytes(Self.es256Y)),
        ])
        let key = try CredentialPublicKey(cose: bytes)
        #expect(key.algorithm == .es256 && key.cose == bytes)
    }

    @Test("an OKP Ed25519 EdDSA key parses")
    func edDSA() throws {
        let x = [UInt8](hex: "44e06ddd331c36a8dc667bab52bcae63486c916aa5e339e6acebaa84934bf832")
        let key = try CredentialPublicKey(
            cose: Self.cose([(1, .unsigned(1)), (3, CBORWriter.int(-8)), (-1, .unsigned(6)), (-2, .bytes(x))]))
        #expect(key.algorithm == .edDSA)
    }

    @Test("an RSA RS256 key parses, with or without leading zeros and a high top bit")
    func rs256() throws {
        let n = [UInt8](repeating: 0xc5, count: 256)  // top bit set: needs the DER 0x00
        let key = try CredentialPublicKey(
            cose: Self.cose([(1, .unsigned(3)), (3, CBORWriter.int(-257)), (-1, .bytes(n)), (-2, .bytes([1, 0, 1]))]))
        #expect(key.algorithm == .rs256)
        let padded = try CredentialPublicKey(
            cose: Self.cose([
                (1, .unsigned(3)), (3, CBORWriter.int(-257)), (-1, .bytes([0] + n)), (-2, .bytes([0, 1, 0, 1])),
            ]))
        #expect(padded.algorithm == .rs256)
    }

    @Test("keys of the wrong type, curve, algorithm or size are unsupported")
    func unsupported() {
        let ec: [(Int, CBOR)] = [(-1, .unsigned(1)), (-2, .bytes(Self.es256X)), (-3, .bytes(Self.es256Y))]
        #expect(
            reason { try CredentialPublicKey(cose: Self.cose([(1, .unsigned(2)), (3, CBORWriter.int(-8))] + ec)) }
                == .unsupportedKey)
        #expect(
            reason { try CredentialPublicKey(cose: Self.cose([(1, .unsigned(2)), (3, CBORWriter.int(-35))] + ec)) }
                == .unsupportedKey)
        #expect(
            reason {
                try CredentialPublicKey(
                    cose: Self.cose([
                        (1, .unsigned(2)), (3, CBORWriter.int(-7)), (-1, .unsigned(2)), (-2, .bytes(Self.es256X)),
                        (-3, .bytes(Self.es256Y)),
                    ]))
            } == .unsupportedKey)
        let offCurve = Self.cose([
            (1, .unsigned(2)), (3, CBORWriter.int(-7)), (-1, .unsigned(1)),
            (-2, .bytes(.init(repeating: 1, count: 32))), (-3, .bytes(.init(repeating: 2, count: 32))),
        ])
        #expect(reason { try CredentialPublicKey(cose: offCurve) } == .unsupportedKey)
        let rsa1024 = Self.cose([
            (1, .unsigned(3)), (3, CBORWriter.int(-257)), (-1, .bytes(.init(repeating: 0xc5, count: 128))),
            (-2, .bytes([1, 0, 1])),
        ])
        #expect(reason { try CredentialPublicKey(cose: rsa1024) } == .unsupportedKey)
    }

    @Test("keys missing fields, with wrong lengths, private parts or trailing bytes are malformed")
    func malformed() {
        let good: [(Int, CBOR)] = [
            (1, .unsigned(2)), (3, CBORWriter.int(-7)), (-1, .unsigned(1)), (-2, .bytes(Self.es256X)),
            (-3, .bytes(Self.es256Y)),
        ]
        #expect(reason { try CredentialPublicKey(cose: Self.cose(good.filter { $0.0 != 3 })) } == .malformed)
        #expect(reason { try CredentialPublicKey(cose: Self.cose(good.filter { $0.0 != -3 })) } == .malformed)
        #expect(
            reason {
                try CredentialPublicKey(
                    cose: Self.cose(good.map { $0.0 == -2 ? (-2, .bytes(Array(Self.es256X.dropFirst()))) : $0 }))
            } == .malformed)
        #expect(
            reason { try CredentialPublicKey(cose: Self.cose(good.map { $0.0 == -3 ? (-3, .bool(true)) : $0 })) }
                == .malformed)
        #expect(
            reason { try CredentialPublicKey(cose: Self.cose(good + [(-4, .bytes(.init(repeating: 7, count: 32)))])) }
                == .malformed)
        #expect(reason { try CredentialPublicKey(cose: Self.cose(good) + [0x00]) } == .malformed)
        // Duplicate key.
        #expect(reason { try CredentialPublicKey(cose: Self.cose(good + [(3, CBORWriter.int(-7))])) } == .malformed)
        #expect(reason { try CredentialPublicKey(cose: []) } == .malformed)
        // Indefinite byte string.
        #expect(reason { try CredentialPublicKey(cose: [0x5f, 0x41, 0x00, 0xff]) } == .malformed)
    }

    @Test("a signature for other data or with a flipped bit does not verify")
    func tamperedSignature() throws {
        let v = W3C.packedEdDSA
        let key = try #require(
            try AuthenticatorData(attestationParts(v.attestationObject).authData).credentialPublicKey)
        // SHA-256 of the vector's clientDataJSON.
        let clientDataHash = [UInt8](hex: "4add3082a15ab4595b58820e913a01c0b5a0651b27ab54f8ce87959fb5a4ccfc")
        let data = [UInt8](hex: v.authenticatorData) + clientDataHash
        var signature = [UInt8](hex: v.signature)
        #expect(key.verify(signature: signature, data: data))
        #expect(!key.verify(signature: signature, data: data + [0]))
        signature[10] ^= 0x01
        #expect(!key.verify(signature: signature, data: data))
        #expect(!key.verify(signature: [], data: data))
    }
}
