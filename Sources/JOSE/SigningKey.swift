package import Crypto

/// A private key that signs tokens: ES256 on P-256 or RS256 on RSA, with its
/// public JWK and `kid` (the RFC 7638 thumbprint) worked out once. The
/// private half leaves only as PKCS#8 DER in `SecureBytes`, for the server
/// to seal at rest.
package struct SigningKey: Sendable {
    /// The OpenSSL key behind it.
    private enum Backing: Sendable {
        case es256(P256SigningKey)
        case rs256(RSASigningKey)
    }

    private let backing: Backing
    /// The public key as published in the JWK Set, with `kid`, `alg` and `use: "sig"`.
    package let publicJWK: JWK

    /// The algorithm this key signs with.
    package var algorithm: Algorithm {
        switch backing {
        case .es256: .es256
        case .rs256: .rs256
        }
    }

    /// `kid`: the RFC 7638 thumbprint of the public key, the same for the same
    /// key however often it is exported and imported.
    package var keyID: String { publicJWK.keyID ?? publicJWK.thumbprint }

    private init(_ backing: Backing) throws(JOSEError) {
        let parameters: JWK.Parameters
        let algorithm: Algorithm
        do {
            switch backing {
            case .es256(let key):
                let point = try key.publicCoordinates()
                (parameters, algorithm) = (.p256(x: point.x, y: point.y), .es256)
            case .rs256(let key):
                let numbers = try key.publicComponents()
                (parameters, algorithm) = (.rsa(modulus: numbers.modulus, exponent: numbers.exponent), .rs256)
            }
        } catch {
            throw .cryptoFailure(operation: error.operation)
        }
        let anonymous = try JWK(parameters: parameters, algorithm: algorithm)
        self.backing = backing
        publicJWK = try JWK(parameters: parameters, keyID: anonymous.thumbprint, algorithm: algorithm)
    }

    /// A new key for `algorithm` from OpenSSL's CSPRNG (RSA: 2048 bits, the
    /// size every relying party accepts and quick to make).
    /// - Throws: `.cryptoFailure` naming the OpenSSL call that failed;
    ///   `.unsupportedKey` for an algorithm Trifactor only verifies (PS256,
    ///   EdDSA: not in `Algorithm.signing`).
    package static func generate(_ algorithm: Algorithm) throws(JOSEError) -> SigningKey {
        do {
            switch algorithm {
            case .es256: return try SigningKey(.es256(try P256SigningKey.generate()))
            case .rs256: return try SigningKey(.rs256(try RSASigningKey.generate(bits: 2048)))
            case .ps256, .edDSA: throw JOSEError.unsupportedKey
            }
        } catch let error as OpenSSLError {
            throw .cryptoFailure(operation: error.operation)
        } catch let error as JOSEError {
            throw error
        } catch {
            throw .cryptoFailure(operation: "key generation")
        }
    }

    /// The key `pkcs8()` exported; its kind says its algorithm (a P-256 key
    /// signs ES256, an RSA key RS256).
    /// - Throws: `.invalidKey` when the bytes are neither a P-256 key nor an
    ///   RSA key of 2048 bits or more.
    package init(pkcs8 der: SecureBytes) throws(JOSEError) {
        if let key = try? P256SigningKey(pkcs8: der) {
            try self.init(.es256(key))
        } else if let key = try? RSASigningKey(pkcs8: der) {
            try self.init(.rs256(key))
        } else {
            throw .invalidKey
        }
    }

    /// The private key as PKCS#8 DER, in wiped memory, to be sealed by the caller.
    /// - Throws: `.cryptoFailure` when OpenSSL cannot encode it.
    package func pkcs8() throws(JOSEError) -> SecureBytes {
        do {
            switch backing {
            case .es256(let key): return try key.pkcs8()
            case .rs256(let key): return try key.pkcs8()
            }
        } catch {
            throw .cryptoFailure(operation: error.operation)
        }
    }

    /// The JWS signature over `signingInput` in JOSE's form: raw R || S for
    /// ES256 (RFC 7518 §3.4), not the DER OpenSSL writes; PKCS #1 v1.5 for RS256.
    /// - Throws: `.cryptoFailure` naming the OpenSSL call that failed.
    package func signature(for signingInput: [UInt8]) throws(JOSEError) -> [UInt8] {
        let signature: [UInt8]
        do {
            switch backing {
            case .es256(let key): signature = try key.signature(for: signingInput)
            case .rs256(let key): return try key.signature(for: signingInput)
            }
        } catch {
            throw .cryptoFailure(operation: error.operation)
        }
        guard let raw = ECDSASignature.raw(fromDER: signature) else {
            throw .cryptoFailure(operation: "ECDSA signature to raw R || S")
        }
        return raw
    }
}
