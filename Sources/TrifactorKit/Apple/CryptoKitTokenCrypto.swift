#if canImport(CryptoKit)
    import CryptoKit
    public import Foundation

    /// `TokenCrypto` on Apple platforms: CryptoKit's SHA-256 and P-256, and `SecRandomCopyBytes`. RS256 is not
    /// offered (CryptoKit has no RSA): an RS256 ID token is refused, so register the client with ES256, the default.
    /// Compiled on Apple platforms only.
    public struct CryptoKitTokenCrypto: TokenCrypto {
        /// The CryptoKit implementation.
        public init() {}

        public func sha256(_ data: Data) -> Data { Data(SHA256.hash(data: data)) }

        public func randomBytes(_ count: Int) -> Data {
            var bytes = [UInt8](repeating: 0, count: count)
            let status = SecRandomCopyBytes(kSecRandomDefault, count, &bytes)
            precondition(status == errSecSuccess, "SecRandomCopyBytes failed: \(status)")
            return Data(bytes)
        }

        public func isValidES256(signature: Data, message: Data, x: Data, y: Data) -> Bool {
            guard let key = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return key.isValidSignature(ecdsa, for: message)  // hashes `message` with SHA-256
        }

        public func isValidRS256(signature: Data, message: Data, modulus: Data, exponent: Data) -> Bool { false }
    }
#endif
