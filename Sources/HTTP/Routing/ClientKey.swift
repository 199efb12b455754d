import Glibc

/// The key a client's per-IP limits are counted under: the IPv4 address, or
/// the /64 prefix of an IPv6 address (one subscriber usually holds a whole
/// /64, so counting single IPv6 addresses would let them rotate freely).
/// The server's per-IP limits and the bank's sign-in limit both count this way.
package enum ClientKey {
    /// The key of the client at `address` (an IPv4 or IPv6 address as text).
    package static func of(address: String) -> String {
        var v6 = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        let bytes = withUnsafeBytes(of: &v6) { Array($0.prefix(8)) }
        // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 client.
        if let dot = address.lastIndex(of: ":"), address.lowercased().hasPrefix("::ffff:"),
            address[address.index(after: dot)...].contains(".")
        {
            return String(address[address.index(after: dot)...])
        }
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":") + "::/64"
    }
}
