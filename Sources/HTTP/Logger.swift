import Foundation
import Glibc

/// Structured logging: one JSON object per line on standard error, written
/// with a single `write(2)` so lines from several threads never interleave.
public struct Logger: Sendable {
    /// A value in a log line.
    public enum Value: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case string(String), int(Int), double(Double), bool(Bool)
        public init(stringLiteral value: String) { self = .string(value) }
        public init(integerLiteral value: Int) { self = .int(value) }
    }

    private let sink: @Sendable (String) -> Void

    /// A logger writing to file descriptor 2.
    public static let standardError = Logger { line in
        var bytes = Array(line.utf8)
        bytes.append(0x0a)
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// A logger that hands each line to `sink` (tests).
    public init(sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// Writes `{"time":…,"level":…,"event":…, fields…}`.
    /// - Important: never pass a password, code or token in `fields`.
    public func log(_ level: String = "info", _ event: String, _ fields: [String: Value] = [:]) {
        var object: [String: Any] = ["time": Date().timeIntervalSince1970, "level": level, "event": event]
        for (k, v) in fields {
            switch v {
            case .string(let s): object[k] = s
            case .int(let i): object[k] = i
            case .double(let d): object[k] = d
            case .bool(let b): object[k] = b
            }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        sink(String(decoding: data, as: UTF8.self))
    }
}
