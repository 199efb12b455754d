import Core
import Crypto
import Foundation
import JOSE
import Testing

@Suite("JWS compact signing and verification")
struct JWSTests {
    /// One key of each kind, made once: RSA generation takes a while.
    static let es256 = try! SigningKey.generate(.es256)
    static let rs256 = try! SigningKey.generate(.rs256)
    static let keys = try! JWKSet(keys: [es256.publicJWK, rs256.publicJWK])
    static let payload = Array(#"{"sub":"user-1"}"#.utf8)

    /// `token` with its part `index` replaced by `text`.
    static func replacing(_ index: Int, of token: String, with text: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = text
        return parts.joined(separator: ".")
    }

    /// A token signed by `key` over a header written as given.
    static func token(header: String, key: SigningKey) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)))
    }

    @Test("a token signed with either algorithm verifies against the set and gives back its header and payload")
    func roundTrip() throws {
        for key in [Self.es256, Self.rs256] {
            let token = try JWS.sign(Self.payload, with: key)
            let verified = try JWS.verify(token, keys: Self.keys, allowing: [.es256, .rs256])
            #expect(verified.header == JWSHeader(algorithm: key.algorithm, keyID: key.keyID, type: "JWT"))
            #expect(verified.payload == Self.payload)
        }
    }

    @Test("an ES256 signature is 64 raw bytes, and RS256 one as long as the modulus")
    func signatureSizes() throws {
        let es = try JWS.sign(Self.payload, with: Self.es256).split(separator: ".")[2]
        let rs = try JWS.sign(Self.payload, with: Self.rs256).split(separator: ".")[2]
        #expect(Base64URL.decode(String(es))?.count == 64)
        #expect(Base64URL.decode(String(rs))?.count == 256)
    }

    @Test("a token with a changed header, payload or signature is refused")
    func tampered() throws {
        for key in [Self.es256, Self.rs256] {
            let token = try JWS.sign(Self.payload, with: key)
            let payload = Self.replacing(1, of: token, with: Base64URL.encode(Array(#"{"sub":"user-2"}"#.utf8)))
            #expect(throws: JOSEError.badSignature) {
                try JWS.verify(payload, keys: Self.keys, allowing: [.es256, .rs256])
            }
            let header = try Self.token(
                header: #"{"alg":"\#(key.algorithm.rawValue)","kid":"\#(key.keyID)"}"#, key: key)
            let spliced = Self.replacing(2, of: header, with: String(token.split(separator: ".")[2]))
            #expect(throws: JOSEError.badSignature) {
                try JWS.verify(spliced, keys: Self.keys, allowing: [.es256, .rs256])
            }
            var signature = Base64URL.decode(String(token.split(separator: ".")[2]))!
            signature[5] ^= 0x01
            let flipped = Self.replacing(2, of: token, with: Base64URL.encode(signature))
            #expect(throws: JOSEError.badSignature) {
                try JWS.verify(flipped, keys: Self.keys, allowing: [.es256, .rs256])
            }
        }
    }

    @Test("alg none is refused even with an empty signature part, and so is HS256")
    func noneAndHMAC() throws {
        let none = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Self.payload) + "."
        #expect(throws: JOSEError.malformed) {
            try JWS.verify(none, keys: Self.keys, allowing: Set(Algorithm.allCases))
        }
        let signed = Self.replacing(2, of: none, with: "AAAA")
        #expect(throws: JOSEError.algorithmNotAllowed) {
            try JWS.verify(signed, keys: Self.keys, allowing: Set(Algorithm.allCases))
        }
        let hmac = Self.replacing(0, of: signed, with: Base64URL.encode(Array(#"{"alg":"HS256"}"#.utf8)))
        #expect(throws: JOSEError.algorithmNotAllowed) { try JWS.verify(hmac, keys: Self.keys, allowing: [.rs256]) }
    }

    @Test("an algorithm the caller did not allow is refused though the signature is good")
    func notAllowed() throws {
        let token = try JWS.sign(Self.payload, with: Self.rs256)
        #expect(throws: JOSEError.algorithmNotAllowed) { try JWS.verify(token, keys: Self.keys, allowing: [.es256]) }
        #expect(throws: JOSEError.algorithmNotAllowed) { try JWS.verify(token, keys: Self.keys, allowing: []) }
    }

    @Test("an ES256 token with a DER signature is refused")
    func derSignature() throws {
        let key = try P256SigningKey.generate()
        let jwk = try JWK(
            parameters: .p256(x: try key.publicCoordinates().x, y: try key.publicCoordinates().y), keyID: "der")
        let input =
            Base64URL.encode(Array(#"{"alg":"ES256","kid":"der"}"#.utf8)) + "." + Base64URL.encode(Self.payload)
        let der = try key.signature(for: Array(input.utf8))
        let token = input + "." + Base64URL.encode(der)
        #expect(throws: JOSEError.badSignature) { try JWS.verify(token, key: jwk, allowing: [.es256]) }
        // The same signature in JOSE's form verifies, so the refusal was the form.
        let raw = input + "." + Base64URL.encode(ECDSASignature.raw(fromDER: der)!)
        #expect(try JWS.verify(raw, key: jwk, allowing: [.es256]).payload == Self.payload)
    }

    @Test("a key of the wrong type for the algorithm, or with another alg of its own, is refused")
    func wrongKeyType() throws {
        let forged = try Self.token(header: #"{"alg":"RS256","kid":"\#(Self.es256.keyID)"}"#, key: Self.rs256)
        #expect(throws: JOSEError.keyAlgorithmMismatch) { try JWS.verify(forged, keys: Self.keys, allowing: [.rs256]) }
        let token = try JWS.sign(Self.payload, with: Self.es256)
        #expect(throws: JOSEError.keyAlgorithmMismatch) {
            try JWS.verify(token, key: Self.rs256.publicJWK, allowing: [.es256, .rs256])
        }
    }

    @Test("a kid not in the set, or no kid at all, is an unknown key")
    func unknownKey() throws {
        let other = try SigningKey.generate(.es256)
        #expect(throws: JOSEError.unknownKey) {
            try JWS.verify(try JWS.sign(Self.payload, with: other), keys: Self.keys, allowing: [.es256])
        }
        let anonymous = try Self.token(header: #"{"alg":"ES256"}"#, key: Self.es256)
        #expect(throws: JOSEError.unknownKey) { try JWS.verify(anonymous, keys: Self.keys, allowing: [.es256]) }
        #expect(try JWS.verify(anonymous, key: Self.es256.publicJWK, allowing: [.es256]).payload == Self.payload)
    }

    @Test("a header with crit is refused, even listing nothing")
    func critical() throws {
        for crit in [#"["exp"]"#, "[]"] {
            let header = #"{"alg":"ES256","kid":"\#(Self.es256.keyID)","crit":\#(crit),"exp":1}"#
            let token = try Self.token(header: header, key: Self.es256)
            #expect(throws: JOSEError.criticalHeader) { try JWS.verify(token, keys: Self.keys, allowing: [.es256]) }
        }
    }

    /// The base64url character with the same top two bits as `last` and its
    /// low bits set: the same byte at the end of a 64-byte signature, in a
    /// non-canonical spelling (RFC 7515 Appendix C).
    static func spareBitsSet(_ last: Character) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String(alphabet[alphabet.firstIndex(of: last)! | 0x0F])
    }

    @Test("padding, whitespace, a fourth part, a missing part, spare bits set and an oversize token are malformed")
    func shapes() throws {
        let token = try JWS.sign(Self.payload, with: Self.es256)
        let parts = token.split(separator: ".").map(String.init)
        let refused = [
            Self.replacing(1, of: token, with: Base64URL.encode(Array(#"{"sub":"u"}"#.utf8)) + "="),
            parts[0] + "." + parts[1] + "." + parts[2] + "==",
            " " + token, token + "\n", parts[0] + ". " + parts[1] + "." + parts[2],
            token + ".AAAA", parts[0] + "." + parts[1], "", "..",
            parts[0] + "." + parts[1] + "./" + parts[2].dropFirst(),
            parts[0] + "." + parts[1] + "." + parts[2].dropLast() + Self.spareBitsSet(parts[2].last!),
            Self.replacing(1, of: token, with: String(repeating: "A", count: JWS.maximumLength)),
        ]
        for text in refused {
            #expect(throws: JOSEError.malformed) { try JWS.verify(text, keys: Self.keys, allowing: [.es256]) }
        }
    }

    @Test("a header that is not a JSON object, or whose kid is no string, is malformed")
    func badHeaders() throws {
        for header in ["[]", "ES256", #"{"alg":"ES256","kid":7}"#, #"{"kid":"x"}"#, #"{"alg":"ES256""#] {
            let token = try Self.token(header: header, key: Self.es256)
            #expect(throws: JOSEError.malformed) { try JWS.verify(token, keys: Self.keys, allowing: [.es256]) }
        }
    }

    @Test("a header or claims set naming a member twice is malformed, however the name is spelled")
    func duplicateMembers() throws {
        let kid = Self.es256.keyID
        for header in [
            #"{"alg":"none","kid":"\#(kid)","alg":"ES256"}"#, #"{"alg":"ES256","kid":"\#(kid)","\u0061lg":"none"}"#,
        ] {
            let token = try Self.token(header: header, key: Self.es256)
            #expect(throws: JOSEError.malformed) { try JWS.verify(token, keys: Self.keys, allowing: [.es256]) }
        }
        #expect(throws: JOSEError.malformed) {
            try JWTClaims(payload: Array(#"{"sub":"a","n":{"x":1},"sub":"b"}"#.utf8))
        }
        // The same name in different objects, or as a value, is no duplicate.
        let nested = try JWTClaims(payload: Array(#"{"sub":"sub","a":{"sub":1,"b":["sub",{"sub":2}]}}"#.utf8))
        #expect(nested.subject == "sub")
    }
}
