/// A value bound to or read from SQL.
///
/// There is no blob case: callers store binary data as text (hex or base64).
/// Booleans are stored as the integers 0 and 1.
package enum SQLValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer.
    case int(Int64)
    /// A double-precision float.
    case double(Double)
    /// UTF-8 text.
    case text(String)

    /// `.text(v)`, or `.null` when `v` is nil.
    package init(_ v: String?) { self = v.map { .text($0) } ?? .null }
    /// `.int(v)`, or `.null` when `v` is nil.
    package init(_ v: Int64?) { self = v.map { .int($0) } ?? .null }
    /// `.int(v)`, or `.null` when `v` is nil.
    package init(_ v: Int?) { self = v.map { .int(Int64($0)) } ?? .null }
    /// `.double(v)`, or `.null` when `v` is nil.
    package init(_ v: Double?) { self = v.map { .double($0) } ?? .null }
    /// `.int(1)` for true, `.int(0)` for false.
    package init(_ v: Bool) { self = .int(v ? 1 : 0) }

    /// True for `.null`.

    /// The name of the case, for error details (never the value: it may be a secret).
    var typeName: String {
        switch self {
        case .null: "null"
        case .int: "int"
        case .double: "double"
        case .text: "text"
        }
    }
}

extension SQLValue: ExpressibleByStringLiteral {
    /// A text value from a string literal.
    package init(stringLiteral value: String) { self = .text(value) }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    /// An integer value from an integer literal.
    package init(integerLiteral value: Int64) { self = .int(value) }
}

extension SQLValue: ExpressibleByFloatLiteral {
    /// A double value from a float literal.
    package init(floatLiteral value: Double) { self = .double(value) }
}
