public import Foundation

/// The JSON conventions of the API, shared by server and clients: ISO 8601
/// dates (UTC, with fractional seconds when present), keys as each model's
/// CodingKeys spell them (snake_case).
public enum WireJSON {
    /// An encoder for API bodies.
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(format(date))
        }
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// One shared encoder (JSONEncoder is thread-safe once configured);
    /// building one per response was a measurable cost.
    public static let sharedEncoder = encoder()

    /// One shared decoder (thread-safe once configured), for request bodies.
    public static let sharedDecoder = decoder()

    /// A decoder for API bodies.
    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let text = try c.decode(String.self)
            guard let date = parse(text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 date")
            }
            return date
        }
        return d
    }

    /// `2026-11-29T22:37:51.123Z` (UTC, to the nearest millisecond, as stored). Computed directly
    /// (days-from-civil arithmetic): a formatter per call was a measurable
    /// share of every response.
    public static func format(_ date: Date) -> String {
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let millis = Int(((totalMillis % 1000) + 1000) % 1000)
        let seconds = (totalMillis - Int64(millis)) / 1000
        var days = seconds / 86400
        var secondOfDay = seconds % 86400
        if secondOfDay < 0 {
            secondOfDay += 86400
            days -= 1
        }
        // Civil from days (proleptic Gregorian), after Howard Hinnant.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ n: Int64, _ width: Int) -> String {
            let s = String(n)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(Int64(millis), 3))Z"
    }

    /// Parses ISO 8601 with or without fractional seconds.
    public static func parse(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
