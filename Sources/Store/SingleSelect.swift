/// The connection `Database.readStatement` gives its body: one `SELECT` on a pooled
/// connection outside any transaction, so it is its own. Anything else throws `.query`
/// before it reaches the database: a write (no `READ ONLY` transaction refuses it here),
/// or a second statement (it would see another snapshot).
final class SingleSelect: SQLConnection {
    private let connection: any SQLConnection
    private var ran = false

    init(_ connection: any SQLConnection) { self.connection = connection }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        throw StoreError(.query, detail: "readStatement runs one SELECT through query, nothing else", sql: sql)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [Row] {
        let words = sql.split(maxSplits: 1, whereSeparator: \.isWhitespace)
        guard !ran, words.first?.uppercased() == "SELECT" else {
            throw StoreError(.query, detail: "readStatement runs one SELECT, nothing else", sql: sql)
        }
        ran = true
        return try connection.query(sql, parameters)
    }
}
