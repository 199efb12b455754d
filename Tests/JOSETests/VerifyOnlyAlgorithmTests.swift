import Core
import Crypto
import Foundation
import JOSE
import Testing

/// PS256 (RFC 7518 §3.5) and EdDSA on Ed25519 (RFC 8037), which Trifactor
/// verifies (client assertions, DPoP proofs, request objects) but never signs with.
@Suite("PS256 and EdDSA verification")
struct VerifyOnlyAlgorithmTests {
    /// RFC 8037 A.2: the public half of the A.1 key.
    static let ed25519Key = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#
    /// RFC 8037 A.4: "Example of Ed25519 signing", signed with the A.1 key.
    static let ed25519Token =
        "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc."
        + "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"

    /// A PS256 token made by another implementation (Python cryptography 44, salt of 32 bytes) and its key.
    static let pythonPS256Key =
        #"{"kty":"RSA","e":"AQAB","n":"wkX1yPk1x3t5jI9hQ4zhrey-ANEtEn98AbNPWwdR-0NMPPyOPV5piR5zC2oHxrMo44CENcBw8MwPKTHVBk7cRfHw4DWq56YUH81C-Qb-FHP-30-KJNZ6yARB7pf-ORpPs2efUhudp72-9rXTQbBy77eUGggKais-ydSFs9MhxrVNRjfT0huwYTLWkr1UoipmGOUsmKLMXRWeeFZMYcwTT0p7cSk5UIrmSL1OTx2KMUqQW25c4hxSxyqvOmTwtGdjerSFw6Wf6ig4YAGgHhP9nSloL67qOVSk7lBdLNmXJ5sc6JXPfugOen2BTBYabsSbfpU02aSdGathq8hx3o87mQ"}"#
    static let pythonPS256Token =
        "eyJhbGciOiJQUzI1NiIsImtpZCI6InB5In0.eyJpc3MiOiJqb2UiLCJleHAiOjEzMDA4MTkzODB9."
        + "t3en-KG3ELiXNjxIm-lhaLr4kYRgfrASzvcpwFlBYcuSBvJjabz57xgKNl5ZDG1TgS_Pjvwi4qQPcCKifi0EgYLN37_YUVtAUd5Xbz3cak8Yhu9RLruNg88VcuSDMvVzezHVR8_pfhIewwK031VGcSeXnkWoW5zRJtDD5SSdsOfoZ6_yH6_Y1aSeazWmuN6-ZkzsU089Cj1cNoB36O8N05C0Kanu15NLuhuL5xSOsa2zx_zF-ZqS4_45CljJrumwZ9dRNHdfak080Ccj2fImjWdhnU4sEYpxQLSJCllqg4CPoN8fb0CYJnWhB7Rnsax1WMXr4o3t_d94FtGXBvXHEA"

    /// One RSA key for the PS256 tests, made once: generation takes a while.
    static let rsa = try! RSASigningKey.generate()
    static var rsaJWK: JWK {
        let numbers = try! rsa.publicComponents()
        return try! JWK(parameters: .rsa(modulus: numbers.modulus, exponent: numbers.exponent))
    }

    /// A token whose header is `header`, signed by `sign`.
    static func token(header: String, _ sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(#"{"sub":"user-1"}"#.utf8))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    @Test("the Ed25519 example of RFC 8037 A.4 verifies with the A.2 key, whose thumbprint is A.3's")
    func ed25519Example() throws {
        let key = try JWK(json: Array(Self.ed25519Key.utf8))
        let verified = try JWS.verify(Self.ed25519Token, key: key, allowing: [.edDSA])
        #expect(verified.header == JWSHeader(algorithm: .edDSA, keyID: nil, type: nil))
        #expect(String(decoding: verified.payload, as: UTF8.self) == "Example of Ed25519 signing")
        #expect(key.thumbprint == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
        #expect(key.members["kty"] == "OKP" && key.members["crv"] == "Ed25519" && key.members["y"] == nil)
        #expect(try JWK(json: key.json) == key)
    }

    @Test("an Ed25519 signature altered by one bit, or checked by another kind of key, is refused")
    func ed25519Refusals() throws {
        let key = try JWK(json: Array(Self.ed25519Key.utf8))
        var parts = Self.ed25519Token.split(separator: ".").map(String.init)
        var signature = Base64URL.decode(parts[2])!
        signature[10] ^= 1
        parts[2] = Base64URL.encode(signature)
        #expect(throws: JOSEError.badSignature) {
            try JWS.verify(parts.joined(separator: "."), key: key, allowing: [.edDSA])
        }
        #expect(throws: JOSEError.algorithmNotAllowed) {
            try JWS.verify(Self.ed25519Token, key: key, allowing: [.es256, .rs256, .ps256])
        }
        #expect(throws: JOSEError.keyAlgorithmMismatch) {
            try JWS.verify(Self.ed25519Token, key: Self.rsaJWK, allowing: [.edDSA])
        }
    }

    @Test("OKP keys other than public Ed25519 keys of 32 bytes are refused")
    func okpKeys() throws {
        let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
        #expect(throws: JOSEError.unsupportedKey) {
            try JWK(json: Array(#"{"kty":"OKP","crv":"Ed448","x":"\#(x)"}"#.utf8))
        }
        #expect(throws: JOSEError.unsupportedKey) {
            try JWK(json: Array(#"{"kty":"OKP","crv":"X25519","x":"\#(x)"}"#.utf8))
        }
        #expect(throws: JOSEError.invalidKey) {
            try JWK(json: Array(#"{"kty":"OKP","crv":"Ed25519","x":"\#(x.dropLast(2))"}"#.utf8))
        }
        // RFC 8037 A.1's private d: a public key carrying it was published by mistake.
        #expect(throws: JOSEError.invalidKey) {
            try JWK(
                json: Array(
                    #"{"kty":"OKP","crv":"Ed25519","x":"\#(x)","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}"#.utf8
                ))
        }
        #expect(throws: JOSEError.invalidKey) {
            try JWK(json: Array(#"{"kty":"OKP","crv":"Ed25519","x":"\#(x)","alg":"ES256"}"#.utf8))
        }
    }

    @Test("a PS256 token made by another implementation verifies with its RSA key")
    func ps256FromPython() throws {
        let key = try JWK(json: Array(Self.pythonPS256Key.utf8))
        let verified = try JWS.verify(Self.pythonPS256Token, key: key, allowing: [.ps256])
        #expect(verified.header == JWSHeader(algorithm: .ps256, keyID: "py", type: nil))
        #expect(try JWTClaims(payload: verified.payload).issuer == "joe")
        #expect(throws: JOSEError.algorithmNotAllowed) {
            try JWS.verify(Self.pythonPS256Token, key: key, allowing: [.rs256])
        }
    }

    @Test("PS256 verifies a PSS signature and refuses a PKCS #1 v1.5 one, and RS256 the reverse")
    func ps256AgainstRS256() throws {
        let pss = try Self.token(header: #"{"alg":"PS256"}"#) { try Self.rsa.pssSignature(for: $0) }
        let pkcs1AsPSS = try Self.token(header: #"{"alg":"PS256"}"#) { try Self.rsa.signature(for: $0) }
        let pssAsPKCS1 = try Self.token(header: #"{"alg":"RS256"}"#) { try Self.rsa.pssSignature(for: $0) }
        let all = Set(Algorithm.allCases)
        #expect(try JWS.verify(pss, key: Self.rsaJWK, allowing: all).header.algorithm == .ps256)
        #expect(throws: JOSEError.badSignature) { try JWS.verify(pkcs1AsPSS, key: Self.rsaJWK, allowing: all) }
        #expect(throws: JOSEError.badSignature) { try JWS.verify(pssAsPKCS1, key: Self.rsaJWK, allowing: all) }
        // A key published for RS256 only does not verify PS256.
        let numbers = try Self.rsa.publicComponents()
        let rs256Only = try JWK(
            parameters: .rsa(modulus: numbers.modulus, exponent: numbers.exponent), algorithm: .rs256)
        #expect(throws: JOSEError.keyAlgorithmMismatch) { try JWS.verify(pss, key: rs256Only, allowing: all) }
    }

    @Test("Trifactor makes no PS256 or EdDSA keys of its own")
    func verifyOnly() {
        #expect(Set(Algorithm.signing) == [.es256, .rs256])
        #expect(throws: JOSEError.unsupportedKey) { try SigningKey.generate(.ps256) }
        #expect(throws: JOSEError.unsupportedKey) { try SigningKey.generate(.edDSA) }
    }
}
