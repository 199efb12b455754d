public import Foundation

/// The cryptography Sign in with Trifactor needs and Foundation lacks on Linux: SHA-256 for the PKCE challenge,
/// random bytes for the verifier, `state` and `nonce`, and the ID token's signature check.
///
/// `CryptoKitTokenCrypto` is the value on Apple platforms; `OpenSSLTokenCrypto` (in `TrifactorKitVault`) on Linux.
public protocol TokenCrypto: Sendable {
    /// The SHA-256 digest of `data` (32 bytes).
    func sha256(_ data: Data) -> Data
    /// `count` bytes from a cryptographically secure generator.
    func randomBytes(_ count: Int) -> Data
    /// Whether `signature` (JOSE's raw form: R and S, 32 big-endian bytes each) signs `message` with ECDSA P-256
    /// and SHA-256 under the public point (`x`, `y`), each 32 big-endian bytes.
    func isValidES256(signature: Data, message: Data, x: Data, y: Data) -> Bool
    /// Whether `signature` signs `message` with RSASSA-PKCS1-v1_5 and SHA-256 under the key (`modulus`,
    /// `exponent`), both big-endian. An implementation without RSA answers false: such ID tokens are refused.
    func isValidRS256(signature: Data, message: Data, modulus: Data, exponent: Data) -> Bool
}
