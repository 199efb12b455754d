/// A JWT claims set (RFC 7519 §4): built from typed values and written as
/// deterministic JSON, or read from a verified payload with typed accessors
/// that answer nil for a missing claim or one of another type.
package struct JWTClaims: Sendable, Equatable {
    /// Every claim, registered or not.
    package var values: [String: JSONValue]

    /// Claims from `values` (`["iss": "https://id.example", "exp": 1_700_000_000]`).
    package init(_ values: [String: JSONValue] = [:]) { self.values = values }

    /// Reads a JWS payload.
    /// - Throws: `.malformed` when it is not a JSON object.
    package init(payload: [UInt8]) throws(JOSEError) { values = try JSONValue.parseObject(payload) }

    /// The claims as compact JSON with sorted keys and unescaped slashes: the
    /// same claims always give the same bytes, so tokens are reproducible.
    package var payload: [UInt8] { JSONValue.serialize(values) }

    /// A claim's value, whatever its type.
    package subscript(name: String) -> JSONValue? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// A string claim.
    package func string(_ name: String) -> String? { values[name]?.string }
    /// A whole-number claim.
    package func integer(_ name: String) -> Int64? { values[name]?.integer }
    /// A claim that is an array of strings.
    package func strings(_ name: String) -> [String]? { values[name]?.strings }
    /// A NumericDate claim in seconds since 1970 (RFC 7519 §2; a fraction is dropped).
    package func seconds(_ name: String) -> Int64? { values[name]?.seconds }

    /// `iss`: who issued the token.
    package var issuer: String? { string("iss") }
    /// `sub`: whom the token is about.
    package var subject: String? { string("sub") }
    /// `jti`: the token's own id.
    package var jwtID: String? { string("jti") }
    /// `exp`: when the token stops being valid.
    package var expiresAt: Int64? { seconds("exp") }
    /// `iat`: when it was issued.
    package var issuedAt: Int64? { seconds("iat") }
    /// `nbf`: when it starts being valid.
    package var notBefore: Int64? { seconds("nbf") }

    /// `aud`, a string or an array of strings (RFC 7519 §4.1.3), always as
    /// an array; nil when absent or of another type.
    package var audience: [String]? {
        switch values["aud"] {
        case .string(let one): [one]
        case let value?: value.strings
        case nil: nil
        }
    }
}
