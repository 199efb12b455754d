import Store

/// A value kept in a TEXT column by its raw string: decoding an unknown
/// string is a decoding error, never a default (fail closed).
protocol StoredValue: RawRepresentable, Sendable where RawValue == String {}

extension StoredValue {
    /// The SQL parameter.
    var sql: SQLValue { .text(rawValue) }
}

extension Row {
    /// The column `name` as a stored value.
    /// - Throws: `StoreError` `.decoding` when it holds a string the program does not know.
    func value<V: StoredValue>(_ name: String, as type: V.Type = V.self) throws -> V {
        let raw = try text(name)
        guard let value = V(rawValue: raw) else {
            throw StoreError(.decoding, detail: "column \(name) holds \"\(raw.prefix(40))\", not a \(V.self)")
        }
        return value
    }

    /// The column `name` as a list of stored values (`StoredList`).
    /// - Throws: `StoreError` `.decoding` for an item the program does not know.
    func list<V: StoredValue>(_ name: String, of type: V.Type = V.self) throws -> [V] {
        try StoredList.decode(try text(name), column: name)
    }
}

/// The one way a list is kept in a TEXT column: items joined by commas.
/// Items never contain a comma (encoding checks it), and an unknown item is
/// a decoding error.
enum StoredList {
    static func encode<V: StoredValue>(_ items: [V]) -> SQLValue {
        encode(items.map(\.rawValue))
    }

    static func encode(_ items: [String]) -> SQLValue {
        precondition(
            items.allSatisfy { !$0.isEmpty && !$0.contains(",") }, "a stored list item is empty or holds a comma")
        return .text(items.joined(separator: ","))
    }

    static func decode<V: StoredValue>(_ text: String, column: String) throws -> [V] {
        try decode(text).map { item in
            guard let value = V(rawValue: item) else {
                throw StoreError(.decoding, detail: "column \(column) lists \"\(item.prefix(40))\", not a \(V.self)")
            }
            return value
        }
    }

    static func decode(_ text: String) -> [String] {
        text.split(separator: ",").map(String.init)
    }
}
