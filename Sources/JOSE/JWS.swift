import Crypto

/// JWS compact serialization (RFC 7515 §7.1), `header.payload.signature`:
/// signing with a `SigningKey`, verifying against a `JWKSet` or one `JWK`.
package enum JWS {
    /// The most a compact token may weigh: ID and access tokens are a few
    /// hundred bytes, and a cap keeps a hostile token from costing much.
    package static let maximumLength = 16 * 1024

    /// A token whose signature verified: its header and payload bytes.
    package struct Verified: Sendable, Equatable {
        package let header: JWSHeader
        package let payload: [UInt8]
    }

    /// Signs `payload` as a compact JWS whose header carries the key's `alg`
    /// and `kid`, and `typ` when given.
    /// - Throws: `.cryptoFailure` when OpenSSL fails.
    package static func sign(_ payload: [UInt8], with key: SigningKey, type: String? = "JWT") throws(JOSEError)
        -> String
    {
        let header = JWSHeader(algorithm: key.algorithm, keyID: key.keyID, type: type)
        let signingInput =
            StrictBase64URL.encode(JSONValue.serialize(header.members)) + "." + StrictBase64URL.encode(payload)
        let signature = try key.signature(for: Array(signingInput.utf8))
        return signingInput + "." + StrictBase64URL.encode(signature)
    }

    /// Verifies `token` with the key of `keys` its header's `kid` names.
    /// - Throws: `.malformed`, `.criticalHeader` or `.algorithmNotAllowed`
    ///   for the token's form; `.unknownKey` when the header has no `kid` or
    ///   the set no such key; `.keyAlgorithmMismatch`; `.badSignature`.
    package static func verify(_ token: String, keys: JWKSet, allowing allowed: Set<Algorithm>) throws(JOSEError)
        -> Verified
    {
        let compact = try Compact(token)
        guard !compact.signature.isEmpty else { throw .malformed }
        let header = try compact.header(allowing: allowed)
        guard let id = header.keyID, let key = keys.key(id: id) else { throw .unknownKey }
        return try compact.verified(header, with: key)
    }

    /// Verifies `token` with `key`, whatever `kid` the header carries, when
    /// the caller already knows the one key (a client's registered key).
    /// - Throws: as `verify(_:keys:allowing:)`, but never `.unknownKey`.
    package static func verify(_ token: String, key: JWK, allowing allowed: Set<Algorithm>) throws(JOSEError)
        -> Verified
    {
        let compact = try Compact(token)
        guard !compact.signature.isEmpty else { throw .malformed }
        return try compact.verified(compact.header(allowing: allowed), with: key)
    }

    /// A compact token split and decoded, its header's JSON read once, its signature not yet checked: for a
    /// caller that reads the header's members itself before it knows the key (a DPoP proof carries its `jwk`).
    package struct Compact {
        /// The header's members, as received (nothing in them is checked yet).
        package let members: [String: JSONValue]
        let signingInput: [UInt8]
        let payload: [UInt8]
        let signature: [UInt8]

        /// Splits `token` and reads its header. The signature may be empty here (an `alg` of `none` is then
        /// refused for its `alg`, by the caller or `verified`); `verified` refuses it as `.malformed`.
        /// - Throws: `.malformed` for anything but three base64url parts, the first a JSON object.
        package init(_ token: String) throws(JOSEError) {
            // Base64url and dots only: whitespace, padding and a JWE's five
            // parts all fail below, before any JSON is read.
            guard token.utf8.count <= maximumLength else { throw .malformed }
            let pieces = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard pieces.count == 3, !pieces[0].isEmpty,
                let header = StrictBase64URL.decode(Substring(pieces[0])),
                let payload = StrictBase64URL.decode(Substring(pieces[1])),
                let signature = StrictBase64URL.decode(Substring(pieces[2]))
            else { throw .malformed }
            members = try JSONValue.parseObject(header)
            self.payload = payload
            self.signature = signature
            // RFC 7515 §5.2: the signature covers the texts as received.
            signingInput = Array(token.utf8[pieces[0].startIndex..<pieces[1].endIndex])
        }

        /// The header, its `alg` one of `allowed`.
        /// - Throws: as `JWSHeader.init(members:allowed:)`.
        package func header(allowing allowed: Set<Algorithm>) throws(JOSEError) -> JWSHeader {
            try JWSHeader(members: members, allowed: allowed)
        }

        /// Verifies the signature with `key`, `alg` one of `allowed`.
        /// - Throws: `.criticalHeader`, `.algorithmNotAllowed`, `.malformed` (the header's form),
        ///   `.keyAlgorithmMismatch`, `.badSignature`.
        package func verified(with key: JWK, allowing allowed: Set<Algorithm>) throws(JOSEError) -> Verified {
            try verified(header(allowing: allowed), with: key)
        }

        func verified(_ header: JWSHeader, with key: JWK) throws(JOSEError) -> Verified {
            guard !signature.isEmpty else { throw .malformed }
            guard key.fits(header.algorithm) else { throw .keyAlgorithmMismatch }
            let valid: Bool
            switch header.algorithm {
            case .es256:
                // RFC 7518 §3.4: exactly R || S. A DER signature (what OpenSSL
                // writes) is refused rather than guessed at.
                guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else {
                    throw .badSignature
                }
                valid = key.publicKey.isValidSignature(der, for: signingInput)
            case .rs256:
                valid = key.publicKey.isValidSignature(signature, for: signingInput)
            case .ps256:
                // RFC 7518 §3.5: MGF1 with SHA-256 and a salt as long as the hash.
                valid = key.publicKey.isValidSignature(signature, for: signingInput, rsaPadding: .pss)
            case .edDSA:
                // RFC 8037 §3.1: Ed25519 over the signing input itself (fits() made sure the key is one).
                valid = key.publicKey.isValidSignature(signature, for: signingInput)
            }
            guard valid else { throw .badSignature }
            return Verified(header: header, payload: payload)
        }
    }
}
