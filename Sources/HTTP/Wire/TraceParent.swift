/// A W3C Trace Context `traceparent` header (`00-<trace-id>-<parent-id>-<flags>`):
/// when a caller sends one, the request's log line carries its trace id and
/// parent span, so Trifactor's lines join the caller's trace. Anything that
/// is not a valid version-00 header (or has an all-zero id) is ignored, as
/// the specification asks.
package struct TraceParent: Sendable, Equatable {
    package let traceID: String
    package let parentID: String
    /// The trace flags (`01`: sampled).
    package let flags: String

    package static func parse(_ header: String?) -> TraceParent? {
        guard let header else { return nil }
        let parts = header.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", isHex(parts[0]),
            parts[1].count == 32, isHex(parts[1]), parts[1].contains(where: { $0 != "0" }),
            parts[2].count == 16, isHex(parts[2]), parts[2].contains(where: { $0 != "0" }),
            parts[3].count == 2, isHex(parts[3]), parts[0] != "00" || parts.count == 4
        else { return nil }
        return TraceParent(traceID: String(parts[1]), parentID: String(parts[2]), flags: String(parts[3]))
    }

    /// The `traceparent` for a call made while serving a request that sent
    /// `header`: the same trace with a new span of ours, or a new trace.
    package static func child(of header: String?) -> String {
        var random = SystemRandomNumberGenerator()
        func hex(_ bytes: Int) -> String {
            (0..<bytes).map { _ in String(UInt8.random(in: 0...255, using: &random), radix: 16) }.map {
                $0.count == 1 ? "0" + $0 : $0
            }.joined()
        }
        let caller = parse(header)
        return "00-\(caller?.traceID ?? hex(16))-\(hex(8))-\(caller?.flags ?? "01")"
    }

    private static func isHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
