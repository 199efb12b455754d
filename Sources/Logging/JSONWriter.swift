import Foundation

/// A JSON object written by hand, for log lines and the few answers on the hot
/// path (`GET /v1/session`), where `JSONEncoder` took a fifth of the server's
/// CPU. Strings are escaped as `JSONEncoder` escapes them (slashes unescaped);
/// the answers built on it are held byte-for-byte to `WireJSON.encoder()` by a test.
package struct JSONWriter {
    private(set) var text = ""
    private var first = true

    init() {}

    /// Writes the members of an object; keys must be given in sorted order.
    package static func object(_ body: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        w.text = "{"
        body(&w)
        w.text += "}"
        return w.text
    }

    private mutating func key(_ k: String) {
        if !first { text += "," }
        first = false
        JSONWriter.string(k, into: &text)
        text += ":"
    }

    package mutating func field(_ k: String, _ v: String?) {
        guard let v else { return }
        key(k)
        JSONWriter.string(v, into: &text)
    }

    package mutating func field(_ k: String, _ v: Int) {
        key(k)
        text += String(v)
    }

    package mutating func field(_ k: String, _ v: Bool) {
        key(k)
        text += v ? "true" : "false"
    }

    package mutating func field(_ k: String, _ v: [String]) {
        key(k)
        text += "["
        for (i, s) in v.enumerated() {
            if i > 0 { text += "," }
            JSONWriter.string(s, into: &text)
        }
        text += "]"
    }

    package mutating func field(_ k: String, object: String) {
        key(k)
        text += object
    }

    /// Appends `s` as a JSON string literal, as JSONEncoder writes it
    /// (slashes unescaped, control characters escaped).
    package static func string(_ s: String, into out: inout String) {
        // Most strings need no escaping: append them whole (this runs per field of every answer and log line).
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5c }) {
            out += "\""
            out += s
            out += "\""
            return
        }
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
