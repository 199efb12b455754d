internal import CSodium
package import Core

/// The operating system's CSPRNG, through libsodium's `randombytes_buf`.
package enum SecureRandom {
    /// `count` unpredictable bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        _ = Sodium.ready
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }

    /// A uniformly distributed integer in `0..<upperBound` (`randombytes_uniform`).
    package static func uniform(_ upperBound: UInt32) -> UInt32 {
        precondition(upperBound > 0, "upper bound must be positive")
        _ = Sodium.ready
        return randombytes_uniform(upperBound)
    }

    /// The live random source for domain code.
    package static let source = RandomSource(bytes: { SecureRandom.bytes($0) }, uniform: { SecureRandom.uniform($0) })
}

/// Comparisons whose time does not depend on where the inputs differ.
package enum ConstantTime {
    /// True when `a` and `b` hold the same bytes. Lengths are compared first
    /// (lengths of hashes and codes are not secret).
    package static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        _ = Sodium.ready
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0 }
        }
    }

    /// Compares two strings' UTF-8 bytes in constant time.
    package static func equals(_ a: String, _ b: String) -> Bool { equals(Array(a.utf8), Array(b.utf8)) }
}
