package import Crypto

/// A public JSON Web Key (RFC 7517) Trifactor verifies with: EC on P-256,
/// RSA of 2048 bits or more, or OKP on Ed25519 (RFC 8037), with its OpenSSL
/// key built once, when the JWK is made, so a bad key is refused before any
/// token meets it.
package struct JWK: Sendable {
    /// The key's public numbers, as big-endian bytes.
    package enum Parameters: Sendable, Equatable {
        /// `kty: "EC"`, `crv: "P-256"`: the point's coordinates, 32 bytes each.
        case p256(x: [UInt8], y: [UInt8])
        /// `kty: "RSA"`: the modulus `n` and public exponent `e`.
        case rsa(modulus: [UInt8], exponent: [UInt8])
        /// `kty: "OKP"`, `crv: "Ed25519"`: the public key `x`, 32 bytes (RFC 8037 §2).
        case ed25519(x: [UInt8])
    }

    package let parameters: Parameters
    /// `kid`: how a token's header names this key.
    package let keyID: String?
    /// `alg`: when present, the only algorithm this key verifies.
    package let algorithm: Algorithm?
    /// The key in OpenSSL, ready to verify.
    package let publicKey: PublicKey

    /// A key from its public numbers.
    /// - Throws: `.invalidKey` for a coordinate or Ed25519 key that is not 32
    ///   bytes, a point off the curve, an RSA number with leading zero bytes (RFC 7518
    ///   §6.3.1 wants the shortest form), or RSA under 2048 bits.
    package init(parameters: Parameters, keyID: String? = nil, algorithm: Algorithm? = nil) throws(JOSEError) {
        do {
            switch parameters {
            case .p256(let x, let y):
                // RFC 7518 §6.2.1.2: a coordinate is always the full 32 bytes.
                guard x.count == 32, y.count == 32 else { throw JOSEError.invalidKey }
                publicKey = try PublicKey(p256X: x, y: y)
            case .rsa(let modulus, let exponent):
                guard modulus.first != 0, exponent.first != 0 else { throw JOSEError.invalidKey }
                publicKey = try PublicKey(rsaModulus: modulus, exponent: exponent)
            case .ed25519(let x):
                guard x.count == 32 else { throw JOSEError.invalidKey }
                publicKey = try PublicKey(ed25519: x)
            }
        } catch {
            throw .invalidKey
        }
        if let algorithm, algorithm.keyType != parameters.keyType { throw .invalidKey }
        self.parameters = parameters
        self.keyID = keyID
        self.algorithm = algorithm
    }

    /// True when this key may verify a signature made with `algorithm`: the
    /// key type fits, and the key's own `alg`, if any, is the same.
    func fits(_ algorithm: Algorithm) -> Bool {
        parameters.keyType == algorithm.keyType && (self.algorithm ?? algorithm) == algorithm
    }

    /// The RFC 7638 thumbprint: SHA-256 over the required members in
    /// lexicographic order without whitespace, base64url. Trifactor's `kid`s.
    package var thumbprint: String {
        // The members are base64url and fixed names, so they need no escaping.
        let canonical =
            switch parameters {
            case .p256(let x, let y):
                #"{"crv":"P-256","kty":"EC","x":"\#(StrictBase64URL.encode(x))","y":"\#(StrictBase64URL.encode(y))"}"#
            case .rsa(let n, let e):
                #"{"e":"\#(StrictBase64URL.encode(e))","kty":"RSA","n":"\#(StrictBase64URL.encode(n))"}"#
            // RFC 8037 §2: crv, kty and x.
            case .ed25519(let x):
                #"{"crv":"Ed25519","kty":"OKP","x":"\#(StrictBase64URL.encode(x))"}"#
            }
        return StrictBase64URL.encode(SHA256.hash(Array(canonical.utf8)))
    }
}

extension JWK: Equatable {
    /// Keys are equal when their numbers, `kid` and `alg` are.
    package static func == (a: JWK, b: JWK) -> Bool {
        a.parameters == b.parameters && a.keyID == b.keyID && a.algorithm == b.algorithm
    }
}

extension JWK.Parameters {
    /// The JWK `kty` of these numbers.
    var keyType: String {
        switch self {
        case .p256: "EC"
        case .rsa: "RSA"
        case .ed25519: "OKP"
        }
    }
}
