/// Where domain code gets unpredictable bytes. The live source is a CSPRNG
/// (libsodium, provided by the Crypto module); tests may inject a fixed one.
package struct RandomSource: Sendable {
    /// Returns `count` random bytes.
    package var bytes: @Sendable (_ count: Int) -> [UInt8]

    /// Returns a uniformly distributed integer in `0..<upperBound` (`upperBound` > 0).
    package var uniform: @Sendable (_ upperBound: UInt32) -> UInt32

    /// A source that draws bytes from `bytes`, and integers from `uniform`
    /// when given (the live source passes libsodium's `randombytes_uniform`),
    /// else by rejection sampling over `bytes`.
    package init(bytes: @escaping @Sendable (Int) -> [UInt8], uniform: (@Sendable (UInt32) -> UInt32)? = nil) {
        self.bytes = bytes
        self.uniform = uniform ?? { upperBound in Self.rejectionSample(upperBound, bytes) }
    }

    /// A uniformly distributed integer in `0..<upperBound` from `bytes`, by
    /// rejection sampling so that no value is more likely than another.
    static func rejectionSample(_ upperBound: UInt32, _ bytes: (Int) -> [UInt8]) -> UInt32 {
        precondition(upperBound > 0, "upper bound must be positive")
        let limit = UInt32.max - (UInt32.max % upperBound)
        while true {
            let b = bytes(4)
            let value = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
            if value < limit { return value % upperBound }
        }
    }

    /// A string of `length` decimal digits, each uniformly distributed.
    package func digits(_ length: Int) -> String {
        String((0..<length).map { _ in Character(String(uniform(10))) })
    }

    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")

    /// A string of `length` ASCII letters and digits, each uniformly distributed (5.95 bits each): key secrets.
    package func alphanumerics(_ length: Int) -> String {
        String((0..<length).map { _ in Self.alphanumerics[Int(uniform(UInt32(Self.alphanumerics.count)))] })
    }
}
