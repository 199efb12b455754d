#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address: parsed from a literal to bind, and
/// formatted from what the kernel reports for a client.
struct SocketAddress {
    private var storage = sockaddr_storage()

    /// The address of `literal` (an IPv4 or IPv6 literal, no name lookup) and `port`.
    /// Returns nil for anything else.
    init?(literal: String, port: UInt16) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = port.bigEndian
                address.pointee.sin_addr = v4
            }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = port.bigEndian
                address.pointee.sin6_addr = v6
            }
        } else {
            return nil
        }
    }

    /// Lends the address as a `sockaddr` for the length of `body`.
    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) throws -> T) rethrows -> T {
        try withUnsafeBytes(of: storage) { raw in try body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    /// The IP address in `address` as text ("192.0.2.1", "2001:db8::1"),
    /// or nil when it is not an IPv4 or IPv6 address.
    static func text(of address: UnsafePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let formatted: UnsafePointer<CChar>?
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            formatted = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &buffer, socklen_t(buffer.count)) }
            }
        case AF_INET6:
            formatted = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafePointer(to: v6.pointee.sin6_addr) {
                    inet_ntop(AF_INET6, $0, &buffer, socklen_t(buffer.count))
                }
            }
        default:
            return nil
        }
        guard formatted != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
