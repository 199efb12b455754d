internal import CSodium
import Core

/// SHA-256 through libsodium (`crypto_hash_sha256`): it hashes every session
/// token on the session check's hot path, where OpenSSL's EVP interface
/// spent longer looking the algorithm up than hashing.
package enum SHA256 {
    /// The 32-byte digest of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        _ = Sodium.ready
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let rc = bytes.withUnsafeBufferPointer { input in
            crypto_hash_sha256(&out, input.baseAddress, UInt64(input.count))
        }
        // crypto_hash_sha256 has no failure but a null pointer, which Swift never passes.
        precondition(rc == 0, "crypto_hash_sha256 failed")
        return out
    }

    /// The digest of a string's UTF-8 bytes, as lower-case hex (how secrets
    /// such as session tokens and codes are stored).
    package static func hex(_ text: String) -> String {
        _ = Sodium.ready
        var text = text
        return text.withUTF8 { input in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(crypto_hash_sha256_BYTES)) { out in
                // An empty string may have no storage: any valid pointer serves for zero bytes.
                let rc = crypto_hash_sha256(
                    out.baseAddress!, input.baseAddress ?? UnsafePointer(out.baseAddress!), UInt64(input.count))
                precondition(rc == 0, "crypto_hash_sha256 failed")
                return Hex.encode(UnsafeBufferPointer(out))
            }
        }
    }

    /// The digest of `bytes`, as lower-case hex.
    package static func hex(_ bytes: [UInt8]) -> String { Hex.encode(hash(bytes)) }

    /// The digest of a secret, as lower-case hex, hashed where it lies (no copy).
    package static func hex(_ secret: SecureBytes) -> String {
        _ = Sodium.ready
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let rc = secret.withUnsafeBytes { input in
            crypto_hash_sha256(&out, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count))
        }
        precondition(rc == 0, "crypto_hash_sha256 failed")
        return Hex.encode(out)
    }
}
