/// One result row; columns are looked up by name (lower-cased, as written in the SQL).
package struct Row: Sendable {
    /// Column names, lower-cased, in result order.
    package let columns: [String]
    /// Values, in the same order as `columns`.
    package let values: [SQLValue]

    /// Internal fast path: names are already lower-cased and shared between the rows of a result.
    init(lowercasedColumns: [String], values: [SQLValue]) {
        self.columns = lowercasedColumns
        self.values = values
    }

    /// The value of `column`, or `.null` when there is no such column.
    package subscript(_ column: String) -> SQLValue {
        if let index = columns.firstIndex(of: column) { return values[index] }
        let lower = column.lowercased()
        if let index = columns.firstIndex(of: lower) { return values[index] }
        return .null
    }

    /// The integer in `column`. PostgreSQL text and whole doubles (e.g. `numeric`) are converted.
    /// - Throws: `StoreError` `.decoding` when the value is null or not an integer.
    package func int(_ column: String) throws -> Int64 {
        guard let value = try optionalInt(column) else { throw mismatch(column, "int", .null) }
        return value
    }

    /// The integer in `column`, or nil when it is null.
    /// - Throws: `StoreError` `.decoding` when the value is not an integer.
    package func optionalInt(_ column: String) throws -> Int64? {
        let value = self[column]
        switch value {
        case .null: return nil
        case .int(let v): return v
        case .double(let d):
            if let v = Int64(exactly: d) { return v }
        case .text(let s):
            if let v = Int64(s) { return v }
        }
        throw mismatch(column, "int", value)
    }

    /// The number in `column` as a double (integers and numeric text are converted).
    /// - Throws: `StoreError` `.decoding` when the value is null or not a number.
    package func double(_ column: String) throws -> Double {
        let value = self[column]
        switch value {
        case .double(let d): return d
        case .int(let v): return Double(v)
        case .text(let s):
            if let d = Double(s) { return d }
        case .null: break
        }
        throw mismatch(column, "double", value)
    }

    /// The text in `column`.
    /// - Throws: `StoreError` `.decoding` when the value is null or not text.
    package func text(_ column: String) throws -> String {
        guard let value = try optionalText(column) else { throw mismatch(column, "text", .null) }
        return value
    }

    /// The text in `column`, or nil when it is null.
    /// - Throws: `StoreError` `.decoding` when the value is not text.
    package func optionalText(_ column: String) throws -> String? {
        let value = self[column]
        switch value {
        case .null: return nil
        case .text(let s): return s
        default: throw mismatch(column, "text", value)
        }
    }

    /// The boolean in `column`: an integer other than 0, or PostgreSQL's `t`/`true`/`f`/`false`.
    /// - Throws: `StoreError` `.decoding` when the value is null or not a boolean.
    package func bool(_ column: String) throws -> Bool {
        let value = self[column]
        switch value {
        case .int(let v): return v != 0
        case .text(let s):
            switch s.lowercased() {
            case "t", "true", "1": return true
            case "f", "false", "0": return false
            default: break
            }
        default: break
        }
        throw mismatch(column, "bool", value)
    }

    private func mismatch(_ column: String, _ expected: String, _ found: SQLValue) -> StoreError {
        let what = columns.contains(column.lowercased()) ? "found \(found.typeName)" : "no such column"
        return StoreError(.decoding, detail: "column \(column): expected \(expected), \(what)")
    }
}
