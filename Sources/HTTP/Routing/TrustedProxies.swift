import Foundation

/// The proxies whose word on the client is taken (`TRIFACTOR_TRUSTED_PROXIES`):
/// addresses or CIDR networks. A request from one of them is read as coming
/// from the client it names in `X-Forwarded-For` (the right-most address
/// that is not itself a trusted proxy) with the browser it names in
/// `X-Forwarded-User-Agent`; from anyone else those headers are ignored.
package struct TrustedProxies: Sendable, Equatable {
    /// One network: its address bytes (4 or 16) and prefix length.
    struct Network: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var left = prefix
            for (a, b) in zip(address, bytes) {
                guard left > 0 else { return true }
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                if a & mask != b & mask { return false }
                left -= 8
            }
            return true
        }
    }

    let networks: [Network]

    /// No proxy is trusted.
    package static let none = TrustedProxies(networks: [])

    init(networks: [Network]) { self.networks = networks }

    /// From `10.0.0.0/8,127.0.0.1,::1`; nil with the first entry that is not an address or a network.
    package init?(parsing text: String) {
        var networks: [Network] = []
        for raw in text.split(separator: ",") {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            if entry.isEmpty { continue }
            let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let bytes = Self.bytes(String(parts[0])) else { return nil }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let p = Int(parts[1]), (0...bytes.count * 8).contains(p) else { return nil }
                prefix = p
            }
            networks.append(Network(bytes: bytes, prefix: prefix))
        }
        self.networks = networks
    }

    /// The entries a deployment should not trust: every address (`/0`), or networks outside the loopback, private,
    /// shared and link-local ranges (where a proxy in front of trifactord normally sits), as `ADDRESS/PREFIX`.
    package var unusual: [String] {
        let local = [
            "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16",
            "::1/128", "fc00::/7", "fe80::/10",
        ].compactMap { TrustedProxies(parsing: $0)?.networks.first }
        return networks.filter { network in
            network.prefix == 0
                || !local.contains {
                    $0.bytes.count == network.bytes.count && $0.prefix <= network.prefix
                        && $0.contains(network.bytes)
                }
        }.map { network in
            var text = [CChar](repeating: 0, count: 64)
            let family = network.bytes.count == 4 ? AF_INET : AF_INET6
            _ = network.bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, 64) }
            return "\(String(cString: text))/\(network.prefix)"
        }
    }

    /// Whether `address` (a literal) is a trusted proxy.
    package func trusts(_ address: String) -> Bool {
        guard !networks.isEmpty, let bytes = Self.bytes(address) else { return false }
        return networks.contains { $0.contains(bytes) }
    }

    /// The client's address and user agent for a request from `peer`.
    package func client(peer: String, forwardedFor: String?, userAgent: String?, forwardedUserAgent: String?) -> (
        address: String, userAgent: String?
    ) {
        guard trusts(peer) else { return (peer, userAgent) }
        var address = peer
        if let forwardedFor {
            let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            // Every hop must be an address, or the header is not taken at all.
            if !hops.isEmpty, hops.allSatisfy({ Self.bytes($0) != nil }) {
                address = hops.last { !trusts($0) } ?? hops[0]
            }
        }
        let agent = forwardedUserAgent.flatMap { $0.isEmpty || $0.count > 512 ? nil : $0 } ?? userAgent
        return (address, agent)
    }

    /// An IPv4 or IPv6 literal's bytes (an IPv4-mapped IPv6 address as IPv4).
    static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes.suffix(4))
        }
        return bytes
    }
}
