#if canImport(Glibc)
    public import Foundation
    import Glibc
    import Synchronization
    public import TrifactorKit

    /// `AuthorizationBrowser` for a program in a terminal (RFC 8252 §7.3): it listens on 127.0.0.1, on a port the
    /// system picks, and its `redirectURI` is `http://127.0.0.1:PORT/callback` (trifactord matches loopback
    /// redirect URIs on any port). `open` hands the page's URL to `show` (which prints it, and may start a
    /// browser), then reads requests until a `GET` of the redirect path comes, answers it with a small page
    /// telling the user to go back to the terminal, and returns its URL. Any other request gets a 404.
    ///
    /// - Important: Only this machine can reach the listener, but any of its users could: the `state` and PKCE
    ///   checks, not the socket, make a stray request harmless.
    public final class LoopbackRedirect: AuthorizationBrowser {
        /// Where the provider sends the browser back: `http://127.0.0.1:PORT` and the path.
        public let redirectURI: URL
        private let listener: Int32
        private let path: String
        private let timeout: TimeInterval
        private let show: @Sendable (URL) -> Void

        /// Starts listening.
        /// - Parameters:
        ///   - path: the redirect URI's path.
        ///   - timeout: seconds to wait for the browser to come back.
        ///   - show: what to do with the sign-in page's URL (print it, start a browser).
        /// - Throws: `TrifactorError.invalidArgument` when no loopback port could be opened.
        public init(
            path: String = "/callback", timeout: TimeInterval = 300, show: @escaping @Sendable (URL) -> Void
        ) throws(TrifactorError) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .invalidArgument("No socket for the browser's answer (errno \(errno)).") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
                }
            }
            guard bound else {
                let code = errno
                close(fd)
                throw .invalidArgument("No loopback port for the browser's answer (errno \(code)).")
            }
            listener = fd
            self.path = path
            self.timeout = timeout
            self.show = show
            redirectURI = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))\(path)")!
        }

        deinit { close(listener) }

        /// Shows `url`, then waits for the browser's `GET` of the redirect path.
        /// - Throws: `TrifactorError` `.expired` after the timeout, `.cancelled` when the task is cancelled.
        public func open(_ url: URL, redirectURI: URL) async throws(TrifactorError) -> URL {
            show(url)
            let stop = Stop()
            let deadline = Date().addingTimeInterval(timeout)
            let result: Result<URL, TrifactorError> = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    // accept() blocks: a thread of its own, polling so that cancellation and the deadline are seen.
                    Thread.detachNewThread { continuation.resume(returning: self.wait(until: deadline, stop: stop)) }
                }
            } onCancel: {
                stop.flag.store(true, ordering: .relaxed)
            }
            return try result.get()
        }

        private final class Stop: Sendable {
            let flag = Atomic(false)
        }

        private func wait(until deadline: Date, stop: Stop) -> Result<URL, TrifactorError> {
            while true {
                if stop.flag.load(ordering: .relaxed) { return .failure(.cancelled) }
                let left = deadline.timeIntervalSinceNow
                if left <= 0 { return .failure(.expired) }
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, Int32(min(left, 0.25) * 1000) + 1) > 0 else { continue }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                defer { close(client) }
                if let target = Self.requestTarget(client), let url = answer(client, target: target) {
                    return .success(url)
                }
            }
        }

        /// The target of a `GET` read from `client` (at most 8 KiB of head, 5 s), or nil.
        private static func requestTarget(_ client: Int32) -> String? {
            var limit = timeval(tv_sec: 5, tv_usec: 0)
            _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            var head: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1024)
            while head.count < 8192, !head.ends(with: Array("\r\n\r\n".utf8)) {
                let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                head += chunk[..<n]
            }
            let line = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "GET", parts[1].hasPrefix("/") else { return nil }
            return String(parts[1])
        }

        /// Answers the request for `target`; its full URL when it is the redirect.
        private func answer(_ client: Int32, target: String) -> URL? {
            let isRedirect = target.split(separator: "?", maxSplits: 1).first.map(String.init) == path
            let body =
                isRedirect
                ? "<!doctype html><meta charset=utf-8><title>Trifactor</title>"
                    + "<p>You can close this tab and return to the terminal.</p>\n"
                : "Not found.\n"
            let head = [
                isRedirect ? "HTTP/1.1 200 OK" : "HTTP/1.1 404 Not Found",
                "Content-Type: \(isRedirect ? "text/html" : "text/plain"); charset=utf-8",
                "Content-Length: \(body.utf8.count)", "Cache-Control: no-store", "Referrer-Policy: no-referrer",
                "Connection: close",
            ]
            let bytes = Array((head.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
            _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return isRedirect ? URL(string: "http://127.0.0.1:\(redirectURI.port ?? 0)\(target)") : nil
        }
    }

    extension Array where Element == UInt8 {
        fileprivate func ends(with suffix: [UInt8]) -> Bool {
            count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
        }
    }
#endif
