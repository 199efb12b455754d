import Foundation
import Testing
import WebUI

/// The console's SVG charts: the bars and the table carry the same numbers, the threshold sits where its value
/// is, a series' pattern is in its legend, and every word is escaped.
extension ConsoleStatsTests {
    /// Every match of `pattern` in `text`, as its capture groups.
    static func captures(_ pattern: String, in text: String) throws -> [[String]] {
        let regex = try NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (1..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } ?? "" }
        }
    }

    /// Sign-ins by outcome over four hours, one of them empty.
    static let stacked = Chart(
        id: "signins-24h", title: "Sign-ins by hour", summary: "Sign-ins per hour, stacked by outcome.",
        bucketHeading: "Hour", buckets: ["09:00", "10:00", "11:00", "12:00"],
        series: [
            .init("Succeeded", [12, 0, 30, 7]), .init("Failed", [3, 0, 5, 1]), .init("Locked", [1, 0, 0, 2]),
        ], totalHeading: "Total")

    @Test("the table holds the numbers the bars show, and each bar's height is in proportion to its number")
    func tableMatchesBars() throws {
        let html = Self.stacked.html.rendered
        // Each drawn part names its bucket, series and number; zeros draw nothing.
        let bars = try Self.captures(
            #"<rect x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)"[^>]*><title>([^<]+), ([^<]+): (\d+)</title>"#,
            in: html)
        let table = try Self.captures(
            #"<tr><th scope="row">([^<]+)</th>((?:<td class="amount">\d+</td>)+)</tr>"#, in: html
        )
        .map { row in (row[0], try Self.captures(#"<td class="amount">(\d+)</td>"#, in: row[1]).map { Int($0[0])! }) }
        let series = Self.stacked.series.map(\.name)
        #expect(table.map(\.0) == Self.stacked.buckets)
        var fromTable: [String: Int] = [:]
        for (bucket, cells) in table {
            #expect(cells.count == series.count + 1)
            #expect(cells.last == cells.dropLast().reduce(0, +), "the total column")
            for (name, value) in zip(series, cells) where value > 0 { fromTable["\(bucket), \(name)"] = value }
        }
        let fromBars = Dictionary(uniqueKeysWithValues: bars.map { ("\($0[2]), \($0[3])", Int($0[4])!) })
        #expect(fromBars == fromTable)
        #expect(fromTable["11:00, Succeeded"] == 30 && fromTable["10:00, Failed"] == nil)
        let perUnit = bars.map { Double($0[1])! / Double($0[4])! }
        #expect(perUnit.allSatisfy { abs($0 - perUnit[0]) < 0.02 }, "\(perUnit)")
        #expect(html.contains(#"<caption>Sign-ins by hour</caption>"#))
        #expect(html.contains(#"<th scope="col">Hour</th><th scope="col">Succeeded</th>"#))
        #expect(html.contains(#"role="img" aria-labelledby="signins-24h-title signins-24h-desc""#))
        #expect(html.contains(#"viewBox="0 0 640 300""#) && !html.contains("style=") && !html.contains("<script"))
    }

    @Test("the threshold line is drawn at its value's height: level with a bar of the same value, named in the legend")
    func thresholdHeight() throws {
        let chart = Chart(
            id: "conversion", title: "Conversion by country", summary: "Completed per started.",
            bucketHeading: "Country", buckets: ["+44", "+49", "+33"],
            series: [.init("Rate", [0.1, 0.25, 0.5])], threshold: .init(value: 0.25, label: "Guard minimum 25%"),
            format: { String(format: "%.0f%%", $0 * 100) })
        let html = chart.html.rendered
        let line = try #require(
            try Self.captures(#"<g class="chart-threshold"><path d="M48,([^ ]+) H628""#, in: html).first)
        let tops = try Self.captures(#"<rect x="[^"]+" y="([^"]+)"[^>]*><title>([^<]+)</title>"#, in: html)
        let level = try #require(tops.first { $0[1] == "+49, Rate: 25%" })
        #expect(abs(Double(line[0])! - Double(level[0])!) < 0.01)
        let above = try #require(tops.first { $0[1] == "+33, Rate: 50%" })
        let below = try #require(tops.first { $0[1] == "+44, Rate: 10%" })
        #expect(Double(above[0])! < Double(line[0])! && Double(line[0])! < Double(below[0])!)
        #expect(html.contains(#"<td class="amount">25%</td>"#))
        let legend = try #require(try Self.captures(#"<ul class="chart-legend">(.*?)</ul>"#, in: html).first?.first)
        #expect(legend.contains("stroke-dasharray") && legend.contains("<span>Guard minimum 25%</span>"))
    }

    @Test("each series has a pattern of its own, used by its bars and its legend swatch")
    func patternsInLegend() throws {
        let html = Self.stacked.html.rendered
        let patterns = try Self.captures(#"<pattern id="([^"]+)" class="([^"]+)""#, in: html)
        #expect(patterns.map { $0[0] } == ["signins-24h-p0", "signins-24h-p1", "signins-24h-p2"])
        #expect(Set(patterns.map { $0[1] }).count == 3, "told apart by shape, not only colour")
        let items = try Self.captures(
            #"<li data-series="(\d)"><svg[^>]*><rect[^>]* fill="url\(#([^)]+)\)"[^>]*></rect></svg><span>([^<]+)</span></li>"#,
            in: html)
        #expect(items.map { $0[2] } == Self.stacked.series.map(\.name))
        for item in items {
            let fills = try Self.captures(#"fill="url\(#([^)]+)\)"[^>]*data-series="\#(item[0])""#, in: html)
            #expect(!fills.isEmpty && fills.allSatisfy { $0[0] == item[1] }, "\(item)")
        }
    }

    @Test(
        "every word from the caller is escaped, in the drawing, the legend and the table; an empty chart draws no NaN")
    func escaped() {
        let chart = Chart(
            id: "x\"><script>", title: "<script>alert(1)</script>", summary: "a & b", bucketHeading: "O'Hare",
            buckets: ["<b>1</b>"], series: [.init("\"quoted\" <i>", [0])], threshold: .init(value: 0, label: "<u>"))
        let html = chart.html.rendered
        #expect(!html.contains("<script") && !html.contains("<b>") && !html.contains("<i>") && !html.contains("<u>"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && html.contains("a &amp; b"))
        #expect(html.contains("O&#39;Hare") && html.contains("&quot;quoted&quot; &lt;i&gt;"))
        #expect(html.contains(#"id="xscript""#))
        #expect(!html.lowercased().contains("nan") && !html.contains("inf"))
    }
}
