import Core
package import Foundation
import Store

extension ID {
    /// The SQL parameter.
    var sql: SQLValue { .text(raw) }
}

extension Row {
    /// The column `name` as an identifier.
    func id<Tag>(_ name: String) throws -> ID<Tag> { ID(try text(name)) }

    /// The column `name` as an identifier, or nil when NULL.
    func optionalID<Tag>(_ name: String) throws -> ID<Tag>? { try optionalText(name).map { ID($0) } }
}

extension Date {
    /// Milliseconds since 1970, as stored.
    package var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    /// A date from stored milliseconds.
    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}
