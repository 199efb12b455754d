import Foundation
import JOSE
import Testing

@Suite("JWT claims")
struct ClaimsTests {
    static let key = try! SigningKey.generate(.es256)
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let issuer = "https://id.example/"

    static func claims(_ extra: [String: JSONValue] = [:]) -> JWTClaims {
        var values: [String: JSONValue] = [
            "iss": .string(issuer), "sub": "user-1", "aud": "bank", "iat": 1_700_000_000, "exp": 1_700_000_300,
        ]
        values.merge(extra) { _, new in new }
        return JWTClaims(values)
    }

    @Test("claims are written as sorted compact JSON with unescaped slashes, the same every time")
    func deterministic() {
        let claims = JWTClaims(["sub": "a/b", "aud": ["x", "y"], "exp": 5, "iss": "https://i/"])
        #expect(
            String(decoding: claims.payload, as: UTF8.self)
                == #"{"aud":["x","y"],"exp":5,"iss":"https://i/","sub":"a/b"}"#)
        #expect(claims.payload == JWTClaims(claims.values).payload)
    }

    @Test("escapes, nesting, numbers and non-ASCII text are written as Foundation's JSON encoder writes them")
    func sameAsTheEncoder() throws {
        let values: [String: JSONValue] = [
            "quote": "say \"hi\"\\ \u{01}\u{1F}\t\n\r\u{08}\u{0C}/", "ünïcode": "Ждём 🐧 عربي",
            "nested": .object(["z": .null, "a": [true, false, .number(1.5), -3]]),
            "big": .integer(9_007_199_254_740_993), "neg": .integer(-1), "whole": .number(2), "huge": .number(1e15),
            "negativeZero": .number(-0.0), "tiny": .number(1e-7), "empty": .object([:]),
            "list": .array([]),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try encoder.encode(values)
        #expect(
            String(decoding: JSONValue.serialize(values), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        // A whole number reads back as an integer.
        #expect(
            try JSONDecoder().decode([String: JSONValue].self, from: Data(JSONValue.serialize(values)))
                == values.merging([
                    "whole": .integer(2), "huge": .integer(1_000_000_000_000_000), "negativeZero": .integer(0),
                ]) {
                    $1
                })
        #expect(String(decoding: JSONValue.serialize(["x": .number(.nan)]), as: UTF8.self) == #"{"x":null}"#)
    }

    @Test("the accessors read registered and private claims, and aud as a string or an array")
    func accessors() throws {
        let claims = try JWTClaims(
            payload: Array(
                #"{"iss":"i","sub":"s","aud":"a","exp":10,"iat":1.5,"nbf":2,"jti":"j","n":3,"r":["x","y"],"b":true}"#
                    .utf8))
        #expect(claims.issuer == "i" && claims.subject == "s" && claims.jwtID == "j" && claims.audience == ["a"])
        #expect(claims.expiresAt == 10 && claims.issuedAt == 1 && claims.notBefore == 2)
        #expect(claims.integer("n") == 3 && claims.strings("r") == ["x", "y"] && claims["b"] == .bool(true))
        #expect(claims.string("n") == nil && claims.integer("b") == nil && claims.strings("sub") == nil)
        #expect(JWTClaims(["aud": ["a", "b"]]).audience == ["a", "b"] && JWTClaims(["aud": 1]).audience == nil)
        #expect(throws: JOSEError.malformed) { try JWTClaims(payload: Array("[1]".utf8)) }
    }

    @Test("a signed JWT verifies and validates in one call")
    func signAndVerify() throws {
        let keys = try JWKSet(keys: [Self.key.publicJWK])
        let token = try JWT.sign(Self.claims(), with: Self.key, type: "at+jwt")
        let (header, claims) = try JWT.verify(
            token, keys: keys, allowing: [.es256], issuer: Self.issuer, audience: "bank", now: Self.now)
        #expect(header.type == "at+jwt" && claims == Self.claims())
    }

    @Test("a token past exp is expired once the leeway is spent, not before")
    func expired() throws {
        let claims = Self.claims()
        let edge = Date(timeIntervalSince1970: 1_700_000_300)
        #expect(throws: JOSEError.expired) {
            try claims.validate(issuer: Self.issuer, audience: "bank", now: edge, leeway: 0)
        }
        try claims.validate(issuer: Self.issuer, audience: "bank", now: edge, leeway: 60)
        try claims.validate(issuer: Self.issuer, audience: "bank", now: edge + 59, leeway: 60)
        #expect(throws: JOSEError.expired) {
            try claims.validate(issuer: Self.issuer, audience: "bank", now: edge + 60, leeway: 60)
        }
    }

    @Test("a token before nbf is not valid yet, beyond the leeway")
    func notBefore() throws {
        let claims = Self.claims(["nbf": 1_700_000_100])
        #expect(throws: JOSEError.notYetValid) {
            try claims.validate(issuer: Self.issuer, audience: "bank", now: Self.now)
        }
        try claims.validate(issuer: Self.issuer, audience: "bank", now: Self.now + 40)
        try claims.validate(issuer: Self.issuer, audience: "bank", now: Self.now + 100, leeway: 0)
    }

    @Test("an aud array holding the audience passes; another audience or issuer is refused")
    func audienceAndIssuer() throws {
        try Self.claims(["aud": ["shop", "bank"]]).validate(issuer: Self.issuer, audience: "bank", now: Self.now)
        #expect(throws: JOSEError.wrongAudience) {
            try Self.claims(["aud": ["shop"]]).validate(issuer: Self.issuer, audience: "bank", now: Self.now)
        }
        #expect(throws: JOSEError.wrongIssuer) {
            try Self.claims().validate(issuer: "https://id.example", audience: "bank", now: Self.now)
        }
    }

    @Test("missing exp, iss or aud, or a claim of the wrong type, is malformed")
    func malformedClaims() throws {
        var cases = [Self.claims(["exp": "soon"]), Self.claims(["nbf": true]), Self.claims(["aud": [1]])]
        for name in ["exp", "iss", "aud"] {
            var claims = Self.claims()
            claims[name] = nil
            cases.append(claims)
        }
        for claims in cases {
            #expect(throws: JOSEError.malformed) {
                try claims.validate(issuer: Self.issuer, audience: "bank", now: Self.now)
            }
        }
    }

    @Test("error descriptions name the rule and carry no token or claim")
    func descriptions() {
        #expect(JOSEError.wrongAudience.description == "the token is for another audience")
        #expect(JOSEError.badSignature != JOSEError.malformed)
    }
}
