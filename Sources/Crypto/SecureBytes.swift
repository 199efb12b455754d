internal import CSodium

/// Secret bytes (a key, a TOTP secret, a recovery code before hashing) in a
/// buffer of their own that is zeroed (`sodium_memzero`) when the last
/// reference goes, compared in constant time, and never printed.
///
/// `@unchecked Sendable`: the buffer is written once, in `init`, and only
/// read afterwards; it is freed in `deinit`, when nothing can read it.
public final class SecureBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` in. The caller's copy is the caller's to forget: pass a
    /// temporary (`SecureBytes(random.bytes(20))`) where it can.
    public init(_ bytes: [UInt8]) {
        _ = Sodium.ready
        buffer = .allocate(byteCount: max(1, bytes.count), alignment: 16)
        buffer.copyBytes(from: bytes)
        count = bytes.count
    }

    /// `count` bytes written in place by `initializer` (a key derived or
    /// decrypted straight into wiped memory, never through an array).
    /// - Throws: what `initializer` throws; the buffer is wiped and freed then.
    public init(count: Int, initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        _ = Sodium.ready
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, count), alignment: 16)
        do {
            try initializer(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
            sodium_memzero(buffer.baseAddress, buffer.count)
            buffer.deallocate()
            throw error
        }
        self.buffer = buffer
        self.count = count
    }

    /// The number of bytes.
    public let count: Int

    deinit {
        sodium_memzero(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }

    /// Reads the bytes; do not let them escape `body`.
    public func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// Constant-time equality (`sodium_memcmp`); unequal lengths are unequal.
    public static func == (a: SecureBytes, b: SecureBytes) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 { return true }
        return sodium_memcmp(a.buffer.baseAddress!, b.buffer.baseAddress!, a.count) == 0
    }

    public var description: String { "SecureBytes(\(count) bytes)" }
    public var debugDescription: String { description }
}
