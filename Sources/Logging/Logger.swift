import Foundation
import Glibc

/// Structured logging: one JSON object per line on standard error, written
/// in batches of whole lines (`LogBuffer`) so lines from several threads
/// never interleave.
/// Lines are built by hand (fixed key order: time, level, event, then the
/// fields sorted by name): this runs once per request, and Foundation's
/// `JSONSerialization` with sorted keys cost more than the request itself.
package struct Logger: Sendable {
    /// A value in a log line.
    package enum Value: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
        package init(stringLiteral value: String) { self = .string(value) }
        package init(integerLiteral value: Int) { self = .int(value) }
    }

    /// How much a line matters, written as its `level` field.
    package enum Level: String, Sendable, CaseIterable {
        /// Detail for a developer chasing a problem.
        case debug
        /// Something that happened as it should (started, listening, migrated).
        case info
        /// Something an operator should look at; written `warn`, as log lines always said it.
        case warning = "warn"
        /// A failure: a request answered 500, work that will be retried, a lost notification.
        case error
    }

    private let sink: @Sendable (String) -> Void

    /// A logger writing to file descriptor 2, in batches (at most 20 ms late).
    package static let standardError = Logger { LogBuffer.standardError.append($0) }

    /// Writes the lines still waiting for standard error (before exiting).
    package static func flushStandardError() { LogBuffer.standardError.flush() }

    /// A logger that hands each line to `sink` (tests).
    package init(sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// Writes `{"time":…,"level":…,"event":…, fields…}`.
    /// - Important: never pass a password, code or token in `fields`.
    package func log(_ level: Level = .info, _ event: String, _ fields: [String: Value] = [:]) {
        write(level: level.rawValue, event, fields)
    }

    /// Writes one line: the time, the level as it is spelled in the log, the event and its fields.
    private func write(level: String, _ event: String, _ fields: [String: Value]) {
        var line = "{\"time\":\(Date().timeIntervalSince1970),\"level\":"
        Self.append(level, to: &line)
        line += ",\"event\":"
        Self.append(event, to: &line)
        for key in fields.keys.sorted() {
            line += ","
            Self.append(key, to: &line)
            line += ":"
            switch fields[key]! {
            case .string(let s): Self.append(s, to: &line)
            case .int(let i): line += String(i)
            case .double(let d): line += d.isFinite ? String(d) : "null"
            case .bool(let b): line += b ? "true" : "false"
            }
        }
        line += "}"
        sink(line)
    }

    /// Writes the line of one answered request: `{"time":…,"level":"info",
    /// "event":"request", ["aborted":true,] "duration_ms":…, "request_id":…,
    /// ["trace_id":…, "parent_id":…,] "method":…, "path":…, "status":…}`,
    /// in that fixed order, without building a dictionary (this runs per request).
    package func request(
        id: String, method: String, path: String, status: Int, durationMillis: Double, aborted: Bool,
        trace: (traceID: String, parentID: String)? = nil
    ) {
        var line = "{\"time\":"
        line.reserveCapacity(160 + path.utf8.count)
        Self.appendFixed(Date().timeIntervalSince1970, decimals: 6, to: &line)
        line += ",\"level\":\"info\",\"event\":\"request\","
        if aborted { line += "\"aborted\":true," }
        line += "\"duration_ms\":"
        Self.appendFixed(durationMillis, decimals: 3, to: &line)
        line += ",\"request_id\":"
        Self.append(id, to: &line)
        if let trace {
            line += ",\"trace_id\":"
            Self.append(trace.traceID, to: &line)
            line += ",\"parent_id\":"
            Self.append(trace.parentID, to: &line)
        }
        line += ",\"method\":"
        Self.append(method, to: &line)
        line += ",\"path\":"
        Self.append(path, to: &line)
        line += ",\"status\":"
        line += String(status)
        line += "}"
        sink(line)
    }

    /// Appends a non-negative finite `value` with `decimals` decimals by integer
    /// arithmetic (Swift's `Double` description costs as much as the rest of the line).
    static func appendFixed(_ value: Double, decimals: Int, to line: inout String) {
        guard value.isFinite, value >= 0, value < 1e12 else {
            line += value.isFinite ? String(value) : "null"
            return
        }
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((value * Double(scale)).rounded())
        appendDigits(scaled / scale, width: 1, to: &line)
        guard decimals > 0 else { return }
        line += "."
        appendDigits(scaled % scale, width: decimals, to: &line)
    }

    /// Appends a non-negative integer's digits, zero-padded to `width`, with no
    /// allocation (at most 19 digits: a small string, appended in place).
    static func appendDigits(_ value: Int64, width: Int, to line: inout String) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var n = value
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(48 + n % 10)
                n /= 10
            } while n > 0 || 20 - start < width
            line += String(decoding: UnsafeBufferPointer(rebasing: buffer[start...]), as: UTF8.self)
        }
    }

    /// Appends `text` as a JSON string literal (RFC 8259 escaping).
    static func append(_ text: String, to line: inout String) {
        JSONWriter.string(text, into: &line)
    }
}
