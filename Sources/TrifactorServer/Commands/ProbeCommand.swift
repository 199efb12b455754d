import Foundation
import Glibc

/// `trifactord probe [HOST:PORT]`: exit 0 when the server there (by default `TRIFACTOR_LISTEN`, a wildcard
/// address read as loopback) answers `GET /ready` with 200, 1 otherwise, a wrong address included (a health
/// check's "unhealthy"); the health check of a container image that has no curl. One connection, a 3 s limit,
/// plain HTTP over IPv4 (a server behind TLS or on IPv6 alone is probed from outside).
enum ProbeCommand {
    static func run(_ arguments: [String], environment: [String: String]) -> Int32 {
        let target = arguments.first ?? environment["TRIFACTOR_LISTEN"] ?? "127.0.0.1:8080"
        guard let colon = target.lastIndex(of: ":"), let port = UInt16(target[target.index(after: colon)...]) else {
            _ = Trifactord.fail("probe needs HOST:PORT, like 127.0.0.1:8080.")
            return 1
        }
        var host = String(target[..<colon])
        if ["0.0.0.0", "", "localhost", "[::]", "[::1]"].contains(host) { host = "127.0.0.1" }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            _ = Trifactord.fail("probe takes an IPv4 address, not \(host).")
            return 1
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return 1 }
        defer { close(fd) }
        var limit = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return 1 }
        let request = Array("GET /ready HTTP/1.0\r\nHost: \(host)\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return 1 }
        // The status line may come in pieces: read until its first 12 bytes are in (or the time limit passes).
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while received.count < 12 {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return 1 }
            received += buffer[..<count]
        }
        let status = String(decoding: received, as: UTF8.self)
        return status.hasPrefix("HTTP/1.1 200") || status.hasPrefix("HTTP/1.0 200") ? 0 : 1
    }
}
