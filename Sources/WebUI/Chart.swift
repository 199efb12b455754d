import Foundation

/// A bar chart drawn on the server as SVG, with no script: bars of one or
/// more series over buckets (stacked when there are several), an optional
/// horizontal threshold line, a legend and a table of the same numbers.
///
/// Readable without colour: each series has a fill pattern of its own as
/// well as a colour (solid, hatched, dotted, crossed, ruled), and its
/// legend swatch is drawn with the same pattern. The SVG is an image named
/// by its title and summary (`role="img"`, `aria-labelledby`); the table
/// beside it carries every number for a screen reader or a reader who
/// wants them exact. Sizes come from the `viewBox` alone, so it scales from
/// a phone to a desktop; colours are presentation attributes, never inline
/// styles (the pages' Content-Security-Policy refuses those).
///
/// Every word comes from the caller: titles, series names, bucket labels
/// and the numbers' format.
package struct Chart: Sendable {
    /// One series: its name (in the legend and the table's heading) and one value per bucket.
    package struct Series: Sendable, Equatable {
        /// The legend's and the table column's name.
        package var name: String
        /// One value per bucket, in bucket order (a missing value counts as zero).
        package var values: [Double]

        /// A series named `name` with `values` per bucket.
        package init(_ name: String, _ values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    /// A horizontal line across the plot at `value`, named by `label` (drawn beside it and said in the summary).
    package struct Threshold: Sendable, Equatable {
        /// Where the line is, in the values' unit.
        package var value: Double
        /// What the line means ("Minimum rate 20%").
        package var label: String

        /// A line at `value` named `label`.
        package init(value: Double, label: String) {
            self.value = value
            self.label = label
        }
    }

    /// Makes ids unique on the page (patterns, title, summary): letters, digits and `-` only.
    package var id: String
    /// The chart's name: the SVG's title and the table's caption.
    package var title: String
    /// One sentence saying what the chart shows (the SVG's description).
    package var summary: String
    /// The heading of the table's first column ("Hour", "Country").
    package var bucketHeading: String
    /// One label per bucket, in order.
    package var buckets: [String]
    /// The series, bottom of the stack first.
    package var series: [Series]
    /// A line to draw across the plot, if any.
    package var threshold: Threshold?
    /// The heading of a total column in the table (several series only); nil leaves it out.
    package var totalHeading: String?
    /// How a number reads in the table, on the axis and in a bar's tooltip.
    package var format: @Sendable (Double) -> String
    /// The label that unfolds the table.
    package var tableLabel = "Show the numbers"

    /// A chart; see the properties for each part. `format` defaults to whole numbers.
    package init(
        id: String, title: String, summary: String, bucketHeading: String, buckets: [String], series: [Series],
        threshold: Threshold? = nil, totalHeading: String? = nil,
        format: @escaping @Sendable (Double) -> String = Chart.wholeNumber
    ) {
        self.id = String(id.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        self.title = title
        self.summary = summary
        self.bucketHeading = bucketHeading
        self.buckets = buckets
        self.series = series
        self.threshold = threshold
        self.totalHeading = totalHeading
        self.format = format
    }

    /// Formats a count: no decimals (rounded).
    package static let wholeNumber: @Sendable (Double) -> String = { String(Int64($0.rounded())) }

    /// The plot's geometry in `viewBox` units.
    package enum Layout {
        /// The whole drawing's width.
        package static let width = 640.0
        /// The whole drawing's height.
        package static let height = 300.0
        /// The plot's left edge: room for the axis labels.
        package static let plotLeft = 48.0
        /// The plot's right edge.
        package static let plotRight = 628.0
        /// The plot's top: the axis top's height.
        package static let plotTop = 16.0
        /// The plot's bottom: zero's height, with room below for the bucket labels.
        package static let plotBottom = 262.0
        /// Horizontal lines the axis is marked with, above zero.
        package static let ticks = 4
    }

    /// Fill colours, one per series in turn, told apart by the patterns too (a palette safe for common colour blindness).
    static let colours = ["#0b4a6f", "#c2410c", "#126b3a", "#7b3294", "#8a6d00", "#4a5866"]
    /// How many patterns there are before they repeat.
    static let patternCount = 5

    /// The value of series `s` in bucket `b` (zero when missing).
    func value(_ s: Int, _ b: Int) -> Double {
        let values = series[s].values
        return b < values.count ? max(0, values[b]) : 0
    }

    /// The sum of bucket `b` over every series: its bar's height.
    func total(_ b: Int) -> Double { series.indices.reduce(0) { $0 + value($1, b) } }

    /// The top of the axis: a round number at or above the tallest bar and the threshold.
    var axisTop: Double {
        let highest = max(buckets.indices.map(total).max() ?? 0, threshold?.value ?? 0)
        return Self.roundTop(highest, wholeSteps: series.allSatisfy { $0.values.allSatisfy { $0 == $0.rounded() } })
    }

    /// The smallest `ticks` × (1, 2, 2.5 or 5 × 10ⁿ) at or above `highest`; whole steps for counts.
    static func roundTop(_ highest: Double, wholeSteps: Bool) -> Double {
        guard highest > 0, highest.isFinite else { return Double(Layout.ticks) * (wholeSteps ? 1 : 0.25) }
        let rough = highest / Double(Layout.ticks)
        let magnitude = pow(10, floor(log10(rough)))
        var step = [1, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        if wholeSteps { step = max(1, step.rounded(.up)) }
        return step * Double(Layout.ticks)
    }

    /// The vertical position of `value` on the plot.
    func y(_ value: Double) -> Double {
        Layout.plotBottom - (Layout.plotBottom - Layout.plotTop) * min(value, axisTop) / axisTop
    }

    /// A coordinate as written in the SVG (two decimals at most).
    static func coordinate(_ value: Double) -> String {
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    /// The id of series `s`'s pattern.
    func patternID(_ s: Int) -> String { "\(id)-p\(s)" }

    /// The figure: its title and summary as the caption, the SVG with its legend, and under them the same numbers
    /// as a table (folded under "Show the numbers", so a day of hours does not push the next chart away; a screen
    /// reader reads the drawing's title and summary, and opens the table like anyone).
    package var html: HTML {
        .element(
            "figure", ["class": "chart", "id": id],
            [
                .element(
                    "figcaption", [:],
                    [.element("h3", [:], [.text(title)]), .element("p", ["class": "hint"], [.text(summary)])]),
                .element("div", ["class": "chart-plot"], [svg, legend]),
                .element("details", [:], [.element("summary", [:], [.text(tableLabel)]), table]),
            ])
    }
}

extension Chart {
    /// The drawing: title and summary, the patterns, the axis, the bars, the bucket labels and the threshold.
    var svg: HTML {
        let titleID = "\(id)-title"
        let summaryID = "\(id)-desc"
        var parts: [HTML] = [
            .element("title", ["id": titleID], [.text(title)]),
            .element(
                "desc", ["id": summaryID],
                [.text([summary, threshold?.label].compactMap { $0 }.joined(separator: " "))]),
            .element("defs", [:], series.indices.map(pattern)),
            axis, bars, bucketLabels,
        ]
        if let threshold { parts.append(line(threshold)) }
        return .element(
            "svg",
            [
                "class": "chart-svg",
                "viewBox": "0 0 \(Self.coordinate(Layout.width)) \(Self.coordinate(Layout.height))",
                "role": "img", "aria-labelledby": "\(titleID) \(summaryID)", "focusable": "false",
            ], parts)
    }

    /// Series `s`'s fill: its colour under its own marks (none, hatching, dots, crossing or rules) in white.
    func pattern(_ s: Int) -> HTML {
        let colour = Self.colours[s % Self.colours.count]
        let marks: HTML
        switch s % Self.patternCount {
        case 0: marks = .empty
        case 1:
            marks = .element(
                "path", ["d": "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4", "stroke": "#fff", "stroke-width": "2"])
        case 2: marks = .element("circle", ["cx": "4", "cy": "4", "r": "1.8", "fill": "#fff"])
        case 3: marks = .element("path", ["d": "M0,0 L8,8 M8,0 L0,8", "stroke": "#fff", "stroke-width": "1.5"])
        default: marks = .element("path", ["d": "M0,2 H8 M0,6 H8", "stroke": "#fff", "stroke-width": "1.5"])
        }
        return .element(
            "pattern",
            [
                "id": patternID(s), "class": "chart-pattern-\(s % Self.patternCount)", "width": "8", "height": "8",
                "patternUnits": "userSpaceOnUse",
            ],
            [.element("rect", ["width": "8", "height": "8", "fill": colour]), marks])
    }

    /// The value axis: a line and a label at zero and at each tick up to the top.
    var axis: HTML {
        let top = axisTop
        let marks: [HTML] = (0...Layout.ticks).map { tick in
            let value = top * Double(tick) / Double(Layout.ticks)
            return .group([
                .element(
                    "path",
                    [
                        "d": Self.horizontal(at: self.y(value)), "stroke": tick == 0 ? "#4a5866" : "#d5dde5",
                        "stroke-width": "1",
                    ]),
                .element(
                    "text",
                    [
                        "x": Self.coordinate(Layout.plotLeft - 6), "y": Self.coordinate(self.y(value) + 4),
                        "text-anchor": "end", "font-size": "12", "fill": "#4a5866",
                    ], [.text(format(value))]),
            ])
        }
        return .element("g", ["class": "chart-axis"], marks)
    }

    /// A path across the plot at height `y` (a path, not a line: attribute names here are letters only).
    static func horizontal(at y: Double) -> String {
        "M\(coordinate(Layout.plotLeft)),\(coordinate(y)) H\(coordinate(Layout.plotRight))"
    }

    /// The width of one bucket's slot on the plot.
    var slot: Double { (Layout.plotRight - Layout.plotLeft) / Double(max(1, buckets.count)) }

    /// One stacked bar per bucket (nothing drawn for a zero), each part with its bucket, series and value as its tooltip.
    var bars: HTML {
        let width = slot * 0.72
        var rects: [HTML] = []
        for b in buckets.indices {
            var base = 0.0
            for s in series.indices where value(s, b) > 0 {
                let v = value(s, b)
                let top = y(base + v)
                rects.append(
                    .element(
                        "rect",
                        [
                            "x": Self.coordinate(Layout.plotLeft + slot * Double(b) + (slot - width) / 2),
                            "y": Self.coordinate(top), "width": Self.coordinate(width),
                            "height": Self.coordinate(y(base) - top), "fill": "url(#\(patternID(s)))",
                            "stroke": "#fff", "stroke-width": "1", "data-series": String(s),
                        ], [.element("title", [:], [.text("\(buckets[b]), \(series[s].name): \(format(v))")])]))
                base += v
            }
        }
        return .element("g", ["class": "chart-bars"], rects)
    }

    /// The bucket labels under the bars: every one when they fit, else every second, third… (the table has them all).
    var bucketLabels: HTML {
        let every = max(1, Int((Double(buckets.count) / 12).rounded(.up)))
        let labels: [HTML] = buckets.indices.filter { $0 % every == 0 }.map { b in
            .element(
                "text",
                [
                    "x": Self.coordinate(Layout.plotLeft + slot * (Double(b) + 0.5)),
                    "y": Self.coordinate(Layout.plotBottom + 20), "text-anchor": "middle", "font-size": "12",
                    "fill": "#17212b",
                ], [.text(buckets[b])])
        }
        return .element("g", ["class": "chart-buckets"], labels)
    }

    /// The threshold: a dashed line across the plot and its label above it (below when the line is near the top).
    func line(_ threshold: Threshold) -> HTML {
        let y = self.y(threshold.value)
        let labelY = y - 6 < Layout.plotTop + 12 ? y + 16 : y - 6
        return .element(
            "g", ["class": "chart-threshold"],
            [
                .element(
                    "path",
                    ["d": Self.horizontal(at: y), "stroke": "#17212b", "stroke-width": "2", "stroke-dasharray": "6 4"]),
                .element(
                    "text",
                    [
                        "x": Self.coordinate(Layout.plotRight), "y": Self.coordinate(labelY), "text-anchor": "end",
                        "font-size": "12", "font-weight": "600", "fill": "#17212b", "stroke": "#fff",
                        "stroke-width": "3", "paint-order": "stroke",
                    ], [.text(threshold.label)]),
            ])
    }

    /// A legend swatch: a small square in `fill`, or the threshold's dashed line.
    static func swatch(fill: String?) -> HTML {
        let mark: HTML =
            if let fill {
                .element(
                    "rect",
                    ["width": "16", "height": "16", "fill": fill, "stroke": "#17212b", "stroke-width": "1"])
            } else {
                .element(
                    "path", ["d": "M0,8 H16", "stroke": "#17212b", "stroke-width": "2", "stroke-dasharray": "4 2"])
            }
        return .element(
            "svg",
            ["viewBox": "0 0 16 16", "width": "16", "height": "16", "aria-hidden": "true", "focusable": "false"],
            [mark])
    }

    /// Each series with a swatch of its pattern, then the threshold's line with its label.
    var legend: HTML {
        var items: [HTML] = series.indices.map { s in
            .element(
                "li", ["data-series": String(s)],
                [Self.swatch(fill: "url(#\(patternID(s)))"), .element("span", [:], [.text(series[s].name)])])
        }
        if let threshold {
            items.append(
                .element(
                    "li", ["class": "chart-threshold"],
                    [Self.swatch(fill: nil), .element("span", [:], [.text(threshold.label)])]))
        }
        return .element("ul", ["class": "chart-legend"], items)
    }

    /// The same numbers as a table: a row per bucket, a column per series (and the total when asked for).
    var table: HTML {
        let total = series.count > 1 ? totalHeading : nil
        let headings =
            [HTML.element("th", ["scope": "col"], [.text(bucketHeading)])]
            + (series.map(\.name) + [total].compactMap { $0 }).map { .element("th", ["scope": "col"], [.text($0)]) }
        let rows: [HTML] = buckets.indices.map { b in
            var cells = [HTML.element("th", ["scope": "row"], [.text(buckets[b])])]
            cells += series.indices.map { .element("td", ["class": "amount"], [.text(format(value($0, b)))]) }
            if total != nil { cells.append(.element("td", ["class": "amount"], [.text(format(self.total(b)))])) }
            return .element("tr", [:], cells)
        }
        // A narrow screen scrolls the table sideways inside its own box (focusable, so a keyboard can scroll it),
        // never the page.
        return .element(
            "div", ["class": "chart-table scroll", "role": "region", "aria-label": title, "tabindex": "0"],
            [
                .element(
                    "table", [:],
                    [
                        .element("caption", [:], [.text(title)]),
                        .element("thead", [:], [.element("tr", [:], headings)]),
                        .element("tbody", [:], rows),
                    ])
            ])
    }
}
