import Core
import Crypto
import Foundation
import JOSE
import Testing

@Suite("Signing keys, JWKs and JWK Sets")
struct KeyTests {
    static let ec =
        #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0""#

    /// The RFC 7515 A.3 key with `extra` members appended.
    static func ecKey(_ extra: String = "") throws -> JWK { try JWK(json: Array((ec + extra + "}").utf8)) }

    @Test("PKCS#8 export and import give back the same key, kid and public JWK")
    func pkcs8RoundTrip() throws {
        for algorithm in Algorithm.signing {
            let key = try SigningKey.generate(algorithm)
            let der = try key.pkcs8()
            let restored = try SigningKey(pkcs8: der)
            #expect(restored.algorithm == algorithm)
            #expect(restored.keyID == key.keyID && restored.publicJWK == key.publicJWK)
            #expect(key.keyID == key.publicJWK.thumbprint)
            // PrivateKeyInfo: SEQUENCE { INTEGER 0, AlgorithmIdentifier, … } (RFC 5208).
            let head = der.withUnsafeBytes { Array($0.prefix(8)) }
            let versionThenAlgorithm: [UInt8] = [0x02, 0x01, 0x00, 0x30]
            #expect(
                head[0] == 0x30
                    && (Array(head[3..<7]) == versionThenAlgorithm || Array(head[4..<8]) == versionThenAlgorithm))
        }
        #expect(throws: JOSEError.invalidKey) { try SigningKey(pkcs8: SecureBytes([0x30, 0x03, 0x02, 0x01, 0x00])) }
    }

    @Test("a public JWK says kty, its numbers, kid, alg and use sig, and reads back equal")
    func publishedJWK() throws {
        let key = try SigningKey.generate(.es256)
        let members = key.publicJWK.members
        #expect(members["kty"] == "EC" && members["crv"] == "P-256" && members["use"] == "sig")
        #expect(members["alg"] == "ES256" && members["kid"] == .string(key.keyID))
        #expect(members["x"]?.string?.count == 43 && members["y"]?.string?.count == 43 && members["d"] == nil)
        #expect(try JWK(json: key.publicJWK.json) == key.publicJWK)
        let rsa = try SigningKey.generate(.rs256).publicJWK.members
        #expect(rsa["kty"] == "RSA" && rsa["e"] == "AQAB" && rsa["n"]?.string?.count == 342 && rsa["d"] == nil)
    }

    @Test("a JWK with a private member is refused")
    func privateMembers() throws {
        #expect(throws: JOSEError.invalidKey) { try Self.ecKey(#","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI""#) }
        #expect(throws: JOSEError.invalidKey) { try Self.ecKey(#","p":"AQAB""#) }
    }

    @Test("an RSA JWK of 1024 bits is refused")
    func shortRSA() throws {
        let modulus = [0xC3] + [UInt8](repeating: 0x5A, count: 126) + [0x01]
        let json = #"{"kty":"RSA","e":"AQAB","n":"\#(Base64URL.encode(modulus))"}"#
        #expect(throws: JOSEError.invalidKey) { try JWK(json: Array(json.utf8)) }
        #expect(throws: JOSEError.invalidKey) {
            try JWK(parameters: .rsa(modulus: [0] + modulus, exponent: [1, 0, 1]))
        }
    }

    @Test("a JWK of another kty, curve, use or alg is unsupported; bad lengths and points are invalid")
    func refusedKeys() throws {
        let unsupported = [
            #"{"kty":"oct"}"#,
            #"{"kty":"OKP","crv":"Ed448","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
            Self.ec.replacingOccurrences(of: "P-256", with: "P-384") + "}",
            Self.ec + #","use":"enc"}"#, Self.ec + #","alg":"ES384"}"#,
        ]
        for json in unsupported {
            #expect(throws: JOSEError.unsupportedKey) { try JWK(json: Array(json.utf8)) }
        }
        let invalid = [
            Self.ec.replacingOccurrences(of: "f83OJ3D2", with: "AAf83OJ3D2") + "}",  // 33-byte x
            Self.ec.replacingOccurrences(of: "x_FEzRu9", with: "x_FEzRu8") + "}",  // off the curve
            Self.ec + #","alg":"RS256"}"#, Self.ec + #","kid":5}"#, #"{"crv":"P-256"}"#, "[]",
            Self.ec.replacingOccurrences(of: "RVEU", with: "RVEU=") + "}",
        ]
        for json in invalid {
            #expect(throws: JOSEError.invalidKey) { try JWK(json: Array(json.utf8)) }
        }
    }

    @Test("a JWK Set reads back what it wrote, finds keys by kid and skips kinds it does not use")
    func keySet() throws {
        let a = try SigningKey.generate(.es256).publicJWK
        let b = try Self.ecKey(#","kid":"rfc""#)
        let set = try JWKSet(keys: [a, b])
        #expect(try JWKSet(json: set.json) == set)
        #expect(set.key(id: "rfc") == b && set.key(id: a.keyID!) == a && set.key(id: "none") == nil)
        let mixed =
            #"{"keys":[{"kty":"OKP","crv":"X25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},"#
            + String(decoding: b.json, as: UTF8.self) + "]}"
        #expect(try JWKSet(json: Array(mixed.utf8)).keys == [b])
        #expect(String(decoding: try JWKSet(keys: []).json, as: UTF8.self) == #"{"keys":[]}"#)
    }

    @Test("a JWK Set with a private key, a duplicate kid or no keys array is refused whole")
    func refusedSets() throws {
        let b = String(decoding: try Self.ecKey(#","kid":"rfc""#).json, as: UTF8.self)
        let leaked = Self.ec + #","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}"#
        #expect(throws: JOSEError.invalidKey) { try JWKSet(json: Array(#"{"keys":[\#(b),\#(leaked)]}"#.utf8)) }
        #expect(throws: JOSEError.invalidKey) { try JWKSet(json: Array(#"{"keys":[\#(b),\#(b)]}"#.utf8)) }
        for json in [#"{"keys":{}}"#, "{}", #"{"keys":["x"]}"#, "[]"] {
            #expect(throws: JOSEError.malformed) { try JWKSet(json: Array(json.utf8)) }
        }
    }
}
