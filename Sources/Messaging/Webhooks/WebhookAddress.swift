import Foundation

/// Which addresses a webhook may reach. By default only public ones: an
/// administrator who can register an endpoint must not be able to make
/// trifactord post into its own network (SSRF): loopback, RFC 1918 and
/// unique-local, link-local (and so cloud metadata at 169.254.169.254),
/// CGNAT, multicast and the reserved ranges are refused, unless the
/// operator allows private addresses (`TRIFACTOR_WEBHOOKS_ALLOW_PRIVATE`).
package enum WebhookAddress {
    /// Whether `address` (a numeric IPv4 or IPv6 address) is one a webhook may not reach by default.
    /// Text that is not an address is restricted too: nothing unparsed gets through.
    package static func isRestricted(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isRestricted(v4: withUnsafeBytes(of: v4) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return true }
        return isRestricted(v6: withUnsafeBytes(of: v6) { Array($0) })
    }

    /// Whether `address` is loopback (127/8 or ::1): the one place plain http may go, for tests.
    package static func isLoopback(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return withUnsafeBytes(of: v4) { $0[0] } == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return false }
        return withUnsafeBytes(of: v6) { Array($0) } == [UInt8](repeating: 0, count: 15) + [1]
    }

    private static func isRestricted(v4 b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): true  // this network, private, loopback
        case (100, 64...127): true  // CGNAT (RFC 6598)
        case (169, 254): true  // link-local, cloud metadata
        case (172, 16...31), (192, 168): true  // private
        case (192, 0) where b[2] == 0 || b[2] == 2: true  // IETF assignments, TEST-NET-1
        case (198, 18...19): true  // benchmarking
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: true  // TEST-NET-2 and -3
        case (224...255, _): true  // multicast, reserved, broadcast
        default: false
        }
    }

    private static func isRestricted(v6 b: [UInt8]) -> Bool {
        let zeros = [UInt8](repeating: 0, count: 10)
        // IPv4-mapped (::ffff:a.b.c.d) and the old IPv4-compatible form: judged as the IPv4 address.
        if Array(b[0..<10]) == zeros && ((b[10] == 0xFF && b[11] == 0xFF) || (b[10] == 0 && b[11] == 0)) {
            return Array(b[0..<16]) == [UInt8](repeating: 0, count: 16) || isRestricted(v4: Array(b[12..<16]))
        }
        // NAT64 (64:ff9b::/96) carries an IPv4 address too.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B { return isRestricted(v4: Array(b[12..<16])) }
        switch b[0] {
        case 0xFC, 0xFD: return true  // unique-local (fd00::/8 is where cloud metadata lives on IPv6)
        case 0xFE where b[1] & 0xC0 == 0x80 || b[1] & 0xC0 == 0xC0: return true  // link-local, old site-local
        case 0xFF: return true  // multicast
        case 0x20 where b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8: return true  // documentation
        default: return b[0] & 0xE0 != 0x20  // only global unicast (2000::/3) is public
        }
    }
}
