import Crypto

/// A credential public key (COSE_Key, RFC 9052/9053, RFC 8230) parsed from
/// CBOR and turned into an OpenSSL key.
///
/// Accepted: EC2 P-256 with ES256 (kty 2, crv 1, 32-byte x and y), OKP
/// Ed25519 with EdDSA (kty 1, crv 6, 32-byte x) and RSA with RS256 (kty 3,
/// n of 2048–8192 bits, e). The `alg` parameter is required and must match
/// the key type.
package struct CredentialPublicKey: Sendable {
    /// The signature algorithm the key is bound to.
    package let algorithm: COSEAlgorithm
    /// The COSE_Key bytes as received (what the server stores).
    package let cose: [UInt8]
    private let key: PublicKey

    /// COSE_Key parameter labels.
    private enum Label {
        static let kty = 1, alg = 3, crv = -1, x = -2, y = -3, d = -4
        static let rsaN = -1, rsaE = -2, rsaD = -3
    }

    /// Parses a COSE_Key (exactly one CBOR map, nothing after it).
    /// - Throws: `.malformed` when it is not a COSE_Key map with the fields
    ///   its key type needs; `.unsupportedKey` for other key types, curves or
    ///   algorithms, an `alg` that does not fit the key type, or a key
    ///   OpenSSL refuses (e.g. a point not on the curve).
    package init(cose: [UInt8]) throws(WebAuthnError) {
        let map = try CBOR.decode(cose)
        guard case .map = map, let kty = map[int: Label.kty]?.int else {
            throw WebAuthnError(.malformed, detail: "COSE key without kty")
        }
        guard let algValue = map[int: Label.alg]?.int else {
            throw WebAuthnError(.malformed, detail: "COSE key without alg")
        }
        guard let algorithm = COSEAlgorithm(rawValue: algValue) else {
            throw WebAuthnError(.unsupportedKey, detail: "COSE alg \(algValue)")
        }
        do {
            switch (kty, algorithm) {
            case (2, .es256):
                guard map[int: Label.d] == nil else {
                    throw WebAuthnError(.malformed, detail: "private key in COSE key")
                }
                guard map[int: Label.crv]?.int == 1 else {
                    throw WebAuthnError(.unsupportedKey, detail: "EC2 curve is not P-256")
                }
                guard case .bytes(let x)? = map[int: Label.x], case .bytes(let y)? = map[int: Label.y], x.count == 32,
                    y.count == 32
                else {
                    throw WebAuthnError(.malformed, detail: "EC2 x/y are not 32-byte strings")
                }
                key = try PublicKey(p256X: x, y: y)
            case (1, .edDSA):
                guard map[int: Label.d] == nil else {
                    throw WebAuthnError(.malformed, detail: "private key in COSE key")
                }
                guard map[int: Label.crv]?.int == 6 else {
                    throw WebAuthnError(.unsupportedKey, detail: "OKP curve is not Ed25519")
                }
                guard case .bytes(let x)? = map[int: Label.x], x.count == 32 else {
                    throw WebAuthnError(.malformed, detail: "OKP x is not a 32-byte string")
                }
                key = try PublicKey(ed25519: x)
            case (3, .rs256):
                guard map[int: Label.rsaD] == nil else {
                    throw WebAuthnError(.malformed, detail: "private key in COSE key")
                }
                guard case .bytes(let n)? = map[int: Label.rsaN], case .bytes(let e)? = map[int: Label.rsaE],
                    !n.isEmpty, n.count <= 1024, !e.isEmpty, e.count <= 8
                else { throw WebAuthnError(.malformed, detail: "RSA n/e missing or out of range") }
                key = try PublicKey(rsaModulus: n, exponent: e)
            default:
                throw WebAuthnError(.unsupportedKey, detail: "kty \(kty) with alg \(algValue)")
            }
        } catch let error as WebAuthnError {
            throw error
        } catch {
            throw WebAuthnError(.unsupportedKey, detail: "OpenSSL refused the key: \(error)")
        }
        self.algorithm = algorithm
        self.cose = cose
    }

    /// True when `signature` signs `data` under this key: DER ECDSA over
    /// SHA-256 (ES256), Ed25519 pure (EdDSA), or RSASSA-PKCS1-v1_5 with
    /// SHA-256 (RS256).
    package func verify(signature: [UInt8], data: [UInt8]) -> Bool {
        key.isValidSignature(signature, for: data)
    }
}
