import API
import Foundation
import Synchronization

/// The `Date` header (RFC 9110 §6.6.1, IMF-fixdate) from the server's own
/// clock, rendered once per second: devices correct their clock skew
/// against it, so it must be the time the server checks signatures with.
final class DateHeader: Sendable {
    private let now: @Sendable () -> Date
    private let cache = Mutex<(second: Int64, text: String)>((Int64.min, ""))

    init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for the current second.
    var value: String {
        let second = Int64(now().timeIntervalSince1970.rounded(.down))
        if let hit = cache.withLock({ $0.second == second ? $0.text : nil }) { return hit }
        let text = Self.format(second)
        cache.withLock { $0 = (second, text) }
        return text
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of a Unix second.
    static func format(_ second: Int64) -> String {
        // WireJSON's ISO 8601 form has the civil date: YYYY-MM-DDTHH:MM:SS.mmmZ.
        let iso = Array(WireJSON.format(Date(timeIntervalSince1970: TimeInterval(second))).utf8)
        func text(_ range: Range<Int>) -> String { String(decoding: iso[range], as: UTF8.self) }
        let days = second >= 0 ? second / 86400 : (second - 86399) / 86400
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        let month = months[(Int(text(5..<7)) ?? 1) - 1]
        return "\(weekday), \(text(8..<10)) \(month) \(text(0..<4)) \(text(11..<19)) GMT"
    }
}
