import Testing

@testable import WebAuthn

/// The CBOR reader refuses what WebAuthn never sends before libcbor can act
/// on it: floats and unknown simple values (libcbor asserts on them and the
/// process aborts), oversized containers (parsing cost), duplicate keys.
@Suite("CBOR")
struct CBORTests {
    @Test(
        "floats of every width and simple values other than true, false and null are malformed, not a crash",
        arguments: [
            [0xf9, 0x00, 0x00], [0xf9, 0x7e, 0x00], [0xfa, 0x00, 0x00, 0x00, 0x00], [0xfb, 0, 0, 0, 0, 0, 0, 0, 0],
            [0xf7], [0xf0], [0xf8, 0x20], [0xf8, 0x14],
        ] as [[UInt8]])
    func floatsAndSimpleValues(bytes: [UInt8]) {
        #expect(reason { try CBOR.decode(bytes) } == .malformed)
        // Nested inside a map and an array too.
        #expect(reason { try CBOR.decode([0xa1, 0x01] + bytes) } == .malformed)
        #expect(reason { try CBOR.decode([0x82, 0x01] + bytes) } == .malformed)
    }

    @Test("true, false and null decode")
    func booleansAndNull() throws {
        #expect(try CBOR.decode([0xf4]) == .bool(false))
        #expect(try CBOR.decode([0xf5]) == .bool(true))
        #expect(try CBOR.decode([0xf6]) == .null)
        #expect(try CBOR.decode([0xa1, 0x62, 0x72, 0x6b, 0xf5]) == .map([.init(key: .text("rk"), value: .bool(true))]))
    }

    @Test("an attestation object that is a half float is malformed (the registration that aborted the process)")
    func halfFloatAttestationObject() {
        #expect(
            reason {
                _ = try WebAuthnVerifier.verifyRegistration(
                    clientDataJSON: Array(
                        #"{"type":"webauthn.create","challenge":"AAAA","origin":"https://example.org"}"#.utf8),
                    attestationObject: [0xf9, 0x00, 0x00], expectedChallenge: [0, 0, 0], rp: exampleRP,
                    requireUserVerification: true)
            } == .malformed)
    }

    @Test(
        "authenticator data whose extensions are a half float is malformed (the passwordless sign-in that aborted the process)"
    )
    func halfFloatExtensions() {
        let data = [UInt8](repeating: 0, count: 32) + [0x85, 0, 0, 0, 1] + [0xf9, 0x00, 0x00]
        #expect(reason { try AuthenticatorData(data) } == .malformed)
    }

    @Test("maps and arrays hold at most 64 elements; an input at most 1024 items")
    func containerCaps() throws {
        let map64 = CBORWriter.encode(.map((0..<64).map { .init(key: CBORWriter.int($0), value: .null) }))
        #expect(try CBOR.decode(map64) != .null)
        let map65 = CBORWriter.encode(.map((0..<65).map { .init(key: CBORWriter.int($0), value: .null) }))
        #expect(reason { try CBOR.decode(map65) } == .malformed)
        let array65 = CBORWriter.encode(.array(Array(repeating: .null, count: 65)))
        #expect(reason { try CBOR.decode(array65) } == .malformed)
        // 11,000 entries in 59 KB took 0.8 s of CPU with a quadratic duplicate check; now refused at its head.
        let huge = CBORWriter.head(5, 11_000) + (0..<11_000).flatMap { CBORWriter.encode(CBORWriter.int($0)) + [0xf6] }
        #expect(reason { try CBOR.decode(huge) } == .malformed)
        // 32 arrays of 32 elements: 1,057 items in all.
        let wide = CBORWriter.encode(.array(Array(repeating: .array(Array(repeating: .null, count: 32)), count: 32)))
        #expect(reason { try CBOR.decode(wide) } == .malformed)
        let fits = CBORWriter.encode(.array(Array(repeating: .array(Array(repeating: .null, count: 30)), count: 32)))
        #expect(try CBOR.decode(fits) != .null)
    }

    @Test("a map that repeats a key is malformed, whatever the key's type")
    func duplicateKeys() {
        for key: CBOR in [
            .unsigned(3), .negative(0), .text("alg"), .bytes([1, 2]), .array([.unsigned(1)]), .bool(true),
        ] {
            let bytes = CBORWriter.encode(
                .map([
                    .init(key: key, value: .null), .init(key: .text("x"), value: .null),
                    .init(key: key, value: .unsigned(1)),
                ]))
            #expect(reason { try CBOR.decode(bytes) } == .malformed)
        }
        // Equal numbers of different major types are different keys.
        let distinct = CBORWriter.encode(
            .map([.init(key: .unsigned(0), value: .null), .init(key: .negative(0), value: .null)]))
        #expect(reason { try CBOR.decode(distinct) } == nil)
    }
}
