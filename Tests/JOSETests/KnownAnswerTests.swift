import Foundation
import JOSE
import Testing

/// The examples of RFC 7515 Appendix A and RFC 7638 §3.1, copied exactly.
@Suite("JOSE known answers")
struct KnownAnswerTests {
    /// The payload of RFC 7515 A.1 to A.3: `{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}`.
    static let payload =
        "eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"

    static let rs256Token =
        "eyJhbGciOiJSUzI1NiJ9." + payload + "."
        + "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    static let rs256Key = #"""
        {"kty":"RSA","e":"AQAB","n":"ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"}
        """#

    static let es256Token =
        "eyJhbGciOiJFUzI1NiJ9." + payload + "."
        + "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"

    static let es256Key = #"""
        {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}
        """#

    @Test("the RS256 example of RFC 7515 A.2 verifies with its JWK, and its payload is the RFC's")
    func rs256Example() throws {
        let key = try JWK(json: Array(Self.rs256Key.utf8))
        let verified = try JWS.verify(Self.rs256Token, key: key, allowing: [.rs256])
        #expect(verified.header == JWSHeader(algorithm: .rs256, keyID: nil, type: nil))
        #expect(
            String(decoding: verified.payload, as: UTF8.self)
                == "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}")
        let claims = try JWTClaims(payload: verified.payload)
        #expect(claims.issuer == "joe" && claims.expiresAt == 1_300_819_380)
        #expect(claims["http://example.com/is_root"] == .bool(true))
    }

    @Test("the ES256 example of RFC 7515 A.3 (raw R || S) verifies with its JWK")
    func es256Example() throws {
        let key = try JWK(json: Array(Self.es256Key.utf8))
        let verified = try JWS.verify(Self.es256Token, key: key, allowing: [.es256])
        #expect(verified.header.algorithm == .es256)
        #expect(try JWTClaims(payload: verified.payload).issuer == "joe")
    }

    @Test("the RFC examples refuse each other's key and an algorithm the caller did not allow")
    func examplesCrossed() throws {
        let rsa = try JWK(json: Array(Self.rs256Key.utf8))
        let ec = try JWK(json: Array(Self.es256Key.utf8))
        #expect(throws: JOSEError.keyAlgorithmMismatch) { try JWS.verify(Self.rs256Token, key: ec, allowing: [.rs256]) }
        #expect(throws: JOSEError.keyAlgorithmMismatch) {
            try JWS.verify(Self.es256Token, key: rsa, allowing: [.es256])
        }
        #expect(throws: JOSEError.algorithmNotAllowed) { try JWS.verify(Self.rs256Token, key: rsa, allowing: [.es256]) }
    }

    @Test("the JWK thumbprint of RFC 7638 §3.1 is NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    func thumbprint() throws {
        let key = try JWK(
            json: Array(
                #"""
                {"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}
                """#.utf8))
        #expect(key.thumbprint == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
        #expect(key.keyID == "2011-04-29" && key.algorithm == .rs256)
    }

    @Test("a JWT made by another implementation (PyJWT 2.15) with the RFC 7515 A.3 key verifies and validates")
    func pyJWT() throws {
        let token =
            "eyJhbGciOiJFUzI1NiIsImtpZCI6InJmYyIsInR5cCI6IkpXVCJ9."
            + "eyJpc3MiOiJodHRwczovL2lkLmV4YW1wbGUvIiwic3ViIjoidXNlci0xIiwiYXVkIjpbInNob3AiLCJiYW5rIl0sImV4cCI6MTcwMDAwMDMwMCwiaWF0IjoxNzAwMDAwMDAwfQ."
            + "lLjvUK8FZZXU7Jpj1saClUO9mXUglKh1-OztGj-x2Uv2p-NQFRAC2O4rouKIK3fO7iN43bb19z7pr0l03NsLQw"
        let key = try JWK(json: Array(Self.es256Key.replacingOccurrences(of: "}", with: #","kid":"rfc"}"#).utf8))
        let (header, claims) = try JWT.verify(
            token, keys: try JWKSet(keys: [key]), allowing: [.es256], issuer: "https://id.example/", audience: "bank",
            now: Date(timeIntervalSince1970: 1_700_000_100))
        #expect(header == JWSHeader(algorithm: .es256, keyID: "rfc", type: "JWT"))
        #expect(claims.subject == "user-1" && claims.audience == ["shop", "bank"] && claims.issuedAt == 1_700_000_000)
    }
}
