/// The rules of RFC 9112 on a request's head that libmicrohttpd 0.9.75 does
/// not enforce, checked before any of the body is read. A request that
/// breaks one is answered with a problem and the connection is closed, so
/// that a proxy in front can never read its bytes differently from us
/// (request smuggling).
package enum RequestHead {
    /// Longest request target (path and query) in bytes; longer ones get 414
    /// problem+json. Half the connection's 8 KiB memory pool, so the check
    /// can fire: a head that does not fit the pool at all is refused by
    /// libmicrohttpd itself (414 or 431, its own short HTML page).
    package static let maximumTargetBytes = 4096
    /// Most query arguments; more get 414. libmicrohttpd stores each one in
    /// the connection's memory pool, and a pool exhausted while it
    /// reads the request line leaves the request unanswered.
    package static let maximumQueryArguments = 64

    /// Checks the request target exactly as sent (before percent-decoding):
    /// its length, its number of query arguments, and `%00` anywhere in it.
    /// - Returns: the problem to answer with, or nil when it is acceptable.
    package static func checkTarget<Bytes: Collection<UInt8>>(_ raw: Bytes) -> HTTPProblem? {
        guard raw.count <= maximumTargetBytes else { return .uriTooLong }
        let bytes = Array(raw)
        var arguments = 0
        var inQuery = false
        for (index, byte) in bytes.enumerated() {
            let escapedNUL =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count
                && bytes[index + 1] == UInt8(ascii: "0") && bytes[index + 2] == UInt8(ascii: "0")
            if byte == 0 || escapedNUL { return .malformedRequest("The request target contains NUL.") }
            if byte == UInt8(ascii: "?") && !inQuery {
                inQuery = true
                arguments = 1
            } else if inQuery && (byte == UInt8(ascii: "&") || byte == UInt8(ascii: ";")) {
                arguments += 1
            }
        }
        return arguments > maximumQueryArguments ? .uriTooLong : nil
    }

    /// Checks the header fields, in the order received with names as sent,
    /// of a request of HTTP `version`:
    /// - every field name is a token (no whitespace before the colon);
    /// - HTTP/1.1 has exactly one `Host`, HTTP/1.0 at most one;
    /// - every `Content-Length` is digits only, and all of them agree;
    /// - `Transfer-Encoding` comes alone (no `Content-Length`), not on
    ///   HTTP/1.0, and is exactly `chunked` (another coding before it is 501).
    /// - Returns: the problem to answer with, or nil when the head is acceptable.
    package static func checkFields(_ fields: [(name: String, value: String)], version: String) -> HTTPProblem? {
        var hosts = 0
        var lengths: [Substring] = []
        var codings: [String] = []
        var hasTransferEncoding = false
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(isTokenByte) else {
                return .malformedRequest("A header field name is not a token.")
            }
            if ASCII.equalsIgnoringCase(field.name, "host") {
                hosts += 1
            } else if ASCII.equalsIgnoringCase(field.name, "content-length") {
                let value = trimmed(field.value)
                guard !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    return .malformedRequest("Content-Length is not a number.")
                }
                lengths.append(value)
            } else if ASCII.equalsIgnoringCase(field.name, "transfer-encoding") {
                hasTransferEncoding = true
                codings += field.value.split(separator: ",").map { trimmed($0).lowercased() }.filter { !$0.isEmpty }
            }
        }
        if version == "HTTP/1.1" && hosts != 1 {
            return .malformedRequest("An HTTP/1.1 request needs exactly one Host field.")
        }
        if hosts > 1 { return .malformedRequest("A request has at most one Host field.") }
        if let first = lengths.first, lengths.contains(where: { $0.drop { $0 == "0" } != first.drop { $0 == "0" } }) {
            return .malformedRequest("Content-Length fields disagree.")
        }
        guard hasTransferEncoding else { return nil }
        guard lengths.isEmpty else {
            return .malformedRequest("A request has Transfer-Encoding or Content-Length, not both.")
        }
        guard version != "HTTP/1.0" else { return .malformedRequest("Transfer-Encoding needs HTTP/1.1.") }
        if codings == ["chunked"] { return nil }
        if codings.last == "chunked" { return .transferCodingNotImplemented }
        return .malformedRequest("Transfer-Encoding must end with chunked.")
    }

    /// RFC 9110 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func trimmed<S: StringProtocol>(_ text: S) -> Substring {
        var value = Substring(text)
        while let c = value.first, c == " " || c == "\t" { value.removeFirst() }
        while let c = value.last, c == " " || c == "\t" { value.removeLast() }
        return value
    }
}
