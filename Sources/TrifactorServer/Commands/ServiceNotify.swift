import Foundation
import Glibc

/// Tells systemd how the service is doing, for `Type=notify` units: the
/// documented datagram protocol (sd_notify(3)) on the socket systemd names in
/// `NOTIFY_SOCKET`, without linking libsystemd. Does nothing when started
/// otherwise.
enum ServiceNotify {
    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`, one per line); false when there is no socket or it
    /// cannot be reached.
    @discardableResult
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard var path = environment["NOTIFY_SOCKET"], path.count > 1, path.utf8.count < 108,
            path.hasPrefix("/") || path.hasPrefix("@")
        else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        // An abstract socket (`@name`) starts with a NUL byte, and its length counts no terminator.
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: (abstract ? [0] : []) + bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 1 : 0))
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), pointer, length) }
            }
        }
        return sent == message.count
    }
}
