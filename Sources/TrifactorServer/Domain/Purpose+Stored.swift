import Core
import Store

extension Purpose {
    /// The SQL parameter.
    var sql: SQLValue { .text(key) }

    /// The purpose of a stored form.
    /// - Throws: `StoreError` `.decoding` for a form the program does not know.
    init(stored: String) throws {
        guard let purpose = Purpose(key: stored) else {
            throw StoreError(.decoding, detail: "\"\(stored.prefix(40))\" is not a purpose")
        }
        self = purpose
    }
}
