internal import COpenSSL
import Core

/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest with a built-in algorithm fails only when memory runs out.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return out
    }

    /// The digest of a string's UTF-8 bytes, as lower-case hex (how secrets
    /// such as session tokens and codes are stored).
    public static func hex(_ text: String) -> String { Hex.encode(hash(Array(text.utf8))) }

    /// The digest of `bytes`, as lower-case hex.
    public static func hex(_ bytes: [UInt8]) -> String { Hex.encode(hash(bytes)) }
}
