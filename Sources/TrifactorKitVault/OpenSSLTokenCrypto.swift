import Crypto
public import Foundation
public import TrifactorKit

/// `TokenCrypto` on Linux, through the `Crypto` module: libsodium's SHA-256 and random bytes, OpenSSL's ES256 (the
/// raw R and S of JOSE turned into DER first) and RS256 (2048 to 8192 bits).
public struct OpenSSLTokenCrypto: TokenCrypto {
    /// The OpenSSL and libsodium implementation.
    public init() {}

    public func sha256(_ data: Data) -> Data { Data(SHA256.hash(Array(data))) }

    public func randomBytes(_ count: Int) -> Data { Data(SecureRandom.bytes(count)) }

    public func isValidES256(signature: Data, message: Data, x: Data, y: Data) -> Bool {
        guard signature.count == 64, let der = ECDSASignature.der(fromRaw: Array(signature)),
            let key = try? PublicKey(p256X: Array(x), y: Array(y))
        else { return false }
        return key.isValidSignature(der, for: Array(message))
    }

    public func isValidRS256(signature: Data, message: Data, modulus: Data, exponent: Data) -> Bool {
        guard let key = try? PublicKey(rsaModulus: Array(modulus), exponent: Array(exponent)) else { return false }
        return key.isValidSignature(Array(signature), for: Array(message))
    }
}
