package import API
package import Foundation
import Glibc

/// A minimal HTTP/1.1 client over a plain TCP socket, so tests control the
/// connection: keep-alive, partial bodies, raw bytes.
package final class HTTPTestClient {
    package struct Response {
        package let status: Int
        package let headers: [String: String]
        package let body: [UInt8]

        package func header(_ name: String) -> String? { headers[name.lowercased()] }
        package var text: String { String(decoding: body, as: UTF8.self) }
        /// The body decoded into a shared API type; a body that does not
        /// decode (or is not JSON) throws, which fails the test.
        package func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
            guard let contentType = header("content-type"), contentType.hasPrefix("application/json") else {
                throw Failure(
                    description:
                        "\(status) with \(header("content-type") ?? "no content type"), not JSON: \(text.prefix(200))")
            }
            return try WireDecoder.decode(type, body)
        }

        /// The body as a JSON object, for the few tests that pin the wire
        /// shape itself (which keys are present); throws when it is not one.
        package func wireObject() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure(description: "\(status): not a JSON object: \(text.prefix(200))")
            }
            return object
        }

        /// The body as an RFC 7807 problem; anything else throws, which fails the test.
        package var problem: Problem {
            get throws {
                guard header("content-type") == "application/problem+json" else {
                    throw Failure(
                        description:
                            "\(status) with \(header("content-type") ?? "no content type"), not a problem: \(text.prefix(200))"
                    )
                }
                return try WireDecoder.decode(Problem.self, body)
            }
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from the loopback address `source` when given (127.0.0.2, …).
    package init(port: Int, source: String? = nil, timeout: Int = 30) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else { throw Failure(description: "bind to \(source) failed") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else { throw Failure(description: "connect to port \(port) failed") }
    }

    // The one close: an initializer that throws once `fd` is set still runs deinit, so closing
    // there too closed the number twice, by then perhaps another thread's (libmicrohttpd's
    // eventfd, which then failed to signal its shutdown and aborted the test process).
    deinit { if fd >= 0 { close(fd) } }

    /// Sends raw bytes.
    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed") }
            offset += n
        }
    }

    /// Sends a request and reads its response on this connection.
    package func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = []) throws
        -> Response
    {
        try send(
            Self.head(method, path, headers: headers, contentLength: body.isEmpty && method == "GET" ? nil : body.count)
                + body)
        return try readResponse()
    }

    /// A JSON request.
    package func json(_ method: String, _ path: String, _ object: Any, token: String? = nil) throws -> Response {
        var headers = ["Content-Type": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let body = try JSONSerialization.data(withJSONObject: object)
        return try request(method, path, headers: headers, body: Array(body))
    }

    /// The request line and headers.
    package static func head(_ method: String, _ path: String, headers: [String: String], contentLength: Int?)
        -> [UInt8]
    {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: trifactor-tests\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// Reads one response (Content-Length framed).
    package func readResponse() throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffer.indices.dropLast(3).first { Array(buffer[$0..<$0 + 4]) == separator }
            if headerEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < length { try fill() }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Response(status: status, headers: headers, body: body)
    }

    /// True when the server has closed the connection (reads end of stream).
    package func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    /// Everything the server sends until it closes the connection, or nil
    /// when it keeps it open past the receive timeout.
    package func readToEnd() -> [UInt8]? {
        var all = buffer
        buffer = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return all }
            if n < 0 { return errno == ECONNRESET ? all : nil }
            all.append(contentsOf: chunk[..<n])
        }
    }

    /// Stops sending (the server reads the end of the stream).
    package func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else {
            throw Failure(description: n == 0 ? "connection closed by server" : "receive failed or timed out")
        }
        buffer.append(contentsOf: chunk[..<n])
    }
}

package enum WireDecoder {
    package static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try WireJSON.decoder().decode(type, from: Data(bytes))
    }
}
