import API
import Foundation
import HTTP
import Logging
import Synchronization
import Testing

@Suite("Wire formats")
struct WireFormatTests {
    @Test("dates format as UTC ISO 8601 to the millisecond and parse back, across leap years and before 1970")
    func dates() throws {
        let reference = Date.ISO8601FormatStyle()
        var samples: [Int64] = [0, 951_782_400_500, -1_250, 4_107_542_399_999]
        for _ in 0..<300 { samples.append(Int64.random(in: -2_000_000_000_000...4_000_000_000_000)) }
        for millis in samples {
            let date = Date(timeIntervalSince1970: Double(millis) / 1000)
            let wholeSeconds = Date(timeIntervalSince1970: Double(millis >= 0 ? millis / 1000 : (millis - 999) / 1000))
            let fraction = ((millis % 1000) + 1000) % 1000
            let expected =
                String(reference.format(wholeSeconds).dropLast()) + "." + String(format: "%03d", Int(fraction)) + "Z"
            let text = WireJSON.format(date)
            #expect(text == expected, "\(millis)")
            let back = try #require(WireJSON.parse(text))
            #expect(Int64((back.timeIntervalSince1970 * 1000).rounded()) == millis)
        }
        #expect(WireJSON.format(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
    }

    @Test("log lines are valid JSON whatever the field text holds")
    func logEscaping() throws {
        let lines = Mutex<[String]>([])
        let logger = Logger { line in lines.withLock { $0.append(line) } }
        let nasty = "quote \" backslash \\ newline \n tab \t bell \u{7} nul \u{0} emoji 🔑"
        logger.log(
            .warning, "odd\"event", ["path": .string(nasty), "n": .int(-3), "ok": .bool(true), "ms": .double(1.5)])
        let line = try #require(lines.withLock { $0.first })
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["path"] as? String == nasty)
        #expect(object["event"] as? String == "odd\"event")
        #expect(object["level"] as? String == "warn")
        #expect(object["n"] as? Int == -3 && object["ok"] as? Bool == true && object["ms"] as? Double == 1.5)
    }
}

@Suite("Hand-written JSON")
struct FastJSONTests {
    @Test(
        "the hot-path encodings are byte-for-byte what JSONEncoder writes",
        arguments: [
            ("plain", nil as String?), ("Ünïcødé 🔑 \"quoted\" back\\slash /slash\n\t\u{1}\u{8}\u{c}", "Ann </script>"),
        ])
    func identical(text: String, displayName: String?) throws {
        let session = SessionInfo(
            id: text, aal: 2, methods: ["pwd", text], createdAt: Date(timeIntervalSince1970: 1_795_992_361.123),
            expiresAt: Date(timeIntervalSince1970: -5.5))
        let user = UserInfo(
            id: "u", email: text, displayName: displayName, emailVerified: true,
            createdAt: Date(timeIntervalSince1970: 0))
        let values: [any (Encodable & FastJSONEncodable)] = [
            session, user, CurrentSession(session: session, user: user), HealthStatus(status: text),
            HealthStatus(status: text, version: text),
        ]
        for value in values {
            let reference = String(decoding: try WireJSON.encoder().encode(value), as: UTF8.self)
            #expect(value.fastJSON == reference)
        }
    }
}
