internal import COpenSSL

/// HMAC through OpenSSL (RFC 2104), for one-time passwords.
package enum HMAC {
    /// The hash functions TOTP allows (RFC 6238).
    package enum Algorithm: String, Sendable, CaseIterable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"

        var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .sha512: 64
            }
        }
    }

    /// HMAC of `message` under `key`.
    package static func authenticate(_ message: [UInt8], key: [UInt8], algorithm: Algorithm) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let md: OpaquePointer? =
            switch algorithm {
            case .sha1: EVP_sha1()
            case .sha256: EVP_sha256()
            case .sha512: EVP_sha512()
            }
        // OpenSSL wants a real pointer even for an empty key: lend it one
        // byte of storage and say the key is zero bytes long.
        let keyStorage = key.isEmpty ? [0] : key
        OpenSSLError.clear()
        let result = keyStorage.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                COpenSSL.HMAC(md, k.baseAddress, Int32(key.count), m.baseAddress, m.count, &out, &length)
            }
        }
        // HMAC with a built-in digest fails only when memory runs out: nothing to recover.
        guard result != nil, Int(length) == algorithm.digestLength else {
            fatalError("HMAC-\(algorithm.rawValue): \(OpenSSLError.last("HMAC"))")
        }
        return Array(out.prefix(Int(length)))
    }
}
