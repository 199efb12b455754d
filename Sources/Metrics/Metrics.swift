import Synchronization

/// Trifactor's measurements in the Prometheus text format (version 0.0.4):
/// counters and histograms with labels, and gauges read when scraped. One
/// registry per process (`Metrics.shared`), as Prometheus clients keep one:
/// each instance of a cluster is scraped on its own and summed by Prometheus.
package final class Metrics: Sendable {
    package static let shared = Metrics()

    private let families = Mutex<[any MetricFamily]>([])

    package init() {}

    /// A counter family, registered once (`_total` names by convention).
    package func counter(_ name: String, _ help: String, labels: [String] = []) -> Counter {
        let counter = Counter(name: name, help: help, labels: labels)
        families.withLock { $0.append(counter) }
        return counter
    }

    /// A histogram family with the given upper bounds (seconds, by convention).
    package func histogram(
        _ name: String, _ help: String, labels: [String] = [], buckets: [Double] = Histogram.latencyBuckets
    ) -> Histogram {
        let histogram = Histogram(name: name, help: help, labels: labels, buckets: buckets)
        families.withLock { $0.append(histogram) }
        return histogram
    }

    /// A gauge family read at each scrape: `read` returns each series' label
    /// values and value. A later gauge of the same name replaces it (the
    /// server started last is the one measured).
    package func gauge(
        _ name: String, _ help: String, labels: [String] = [], read: @escaping @Sendable () -> [([String], Double)]
    ) {
        families.withLock { all in
            all.removeAll { $0.name == name }
            all.append(Gauge(name: name, help: help, labels: labels, read: read))
        }
    }

    /// A family written by its owner at each scrape (`render` appends its
    /// HELP, TYPE and samples); a later one of the same name replaces it.
    package func custom(_ name: String, render: @escaping @Sendable (inout String) -> Void) {
        families.withLock { all in
            all.removeAll { $0.name == name }
            all.append(Custom(name: name, write: render))
        }
    }

    /// Every family in the text exposition format.
    package func render() -> String {
        var text = ""
        text.reserveCapacity(16 * 1024)
        for family in families.withLock({ $0 }) { family.render(into: &text) }
        return text
    }

    /// Formats a sample line's value as Prometheus reads it.
    package static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// `{a="x",b="y"}` with values escaped, or nothing without labels.
    package static func labelText(_ names: [String], _ values: [String], extra: (String, String)? = nil) -> String {
        var pairs = zip(names, values).map { ($0, $1) }
        if let extra { pairs.append(extra) }
        guard !pairs.isEmpty else { return "" }
        return "{"
            + pairs.map { name, value in
                var escaped = ""
                for ch in value.unicodeScalars {
                    switch ch {
                    case "\\": escaped += "\\\\"
                    case "\"": escaped += "\\\""
                    case "\n": escaped += "\\n"
                    default: escaped.unicodeScalars.append(ch)
                    }
                }
                return "\(name)=\"\(escaped)\""
            }.joined(separator: ",") + "}"
    }
}

protocol MetricFamily: Sendable {
    var name: String { get }
    func render(into text: inout String)
}

/// A counter per label set; only goes up.
package final class Counter: MetricFamily {
    let name: String, help: String, labels: [String]
    private let values = Mutex<[[String]: Double]>([:])

    init(name: String, help: String, labels: [String]) {
        self.name = name
        self.help = help
        self.labels = labels
    }

    /// Adds `amount` to the series of `values` (one per label, in order).
    package func add(_ values: [String] = [], _ amount: Double = 1) {
        precondition(values.count == labels.count, "\(name) takes \(labels.count) labels")
        self.values.withLock { $0[values, default: 0] += amount }
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for (key, value) in values.withLock({ $0 }).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            text += "\(name)\(Metrics.labelText(labels, key)) \(Metrics.format(value))\n"
        }
    }
}

/// A histogram per label set: cumulative buckets, a sum and a count.
package final class Histogram: MetricFamily {
    /// 1 ms to 10 s: request latencies and waits.
    package static let latencyBuckets: [Double] = [
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// One series: observations per bucket (the last above every bound), their sum and count.
    package struct Series: Sendable {
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0

        package init(buckets: [Double]) { counts = Array(repeating: 0, count: buckets.count + 1) }

        /// Records `value` (`buckets` sorted, as given to `init`).
        package mutating func record(_ value: Double, buckets: [Double]) {
            counts[buckets.firstIndex { value <= $0 } ?? buckets.count] += 1
            sum += value
            count += 1
        }

        package var isEmpty: Bool { count == 0 }
    }

    let name: String, help: String, labels: [String], buckets: [Double]
    private let series = Mutex<[[String]: Series]>([:])

    init(name: String, help: String, labels: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.labels = labels
        self.buckets = buckets.sorted()
    }

    /// Records one observation in the series of `values`.
    package func observe(_ values: [String] = [], _ value: Double) {
        precondition(values.count == labels.count, "\(name) takes \(labels.count) labels")
        let buckets = buckets
        series.withLock { all in all[values, default: Series(buckets: buckets)].record(value, buckets: buckets) }
    }

    /// Records one observation in a histogram without labels.
    package func observe(_ value: Double) { observe([], value) }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (key, s) in series.withLock({ $0 }).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            Self.write(name, labels: labels, values: key, series: s, buckets: buckets, into: &text)
        }
    }

    /// One series' sample lines: cumulative buckets, `+Inf`, sum and count
    /// (the HELP and TYPE lines are the caller's).
    package static func write(
        _ name: String, labels: [String], values: [String], series s: Series, buckets: [Double], into text: inout String
    ) {
        var cumulative: UInt64 = 0
        for (bound, count) in zip(buckets, s.counts) {
            cumulative += count
            text +=
                "\(name)_bucket\(Metrics.labelText(labels, values, extra: ("le", Metrics.format(bound)))) \(cumulative)\n"
        }
        text += "\(name)_bucket\(Metrics.labelText(labels, values, extra: ("le", "+Inf"))) \(s.count)\n"
        text += "\(name)_sum\(Metrics.labelText(labels, values)) \(Metrics.format(s.sum))\n"
        text += "\(name)_count\(Metrics.labelText(labels, values)) \(s.count)\n"
    }
}

/// A family its owner writes.
final class Custom: MetricFamily {
    let name: String
    let write: @Sendable (inout String) -> Void
    init(name: String, write: @escaping @Sendable (inout String) -> Void) {
        self.name = name
        self.write = write
    }
    func render(into text: inout String) { write(&text) }
}

/// A gauge whose series are read when scraped.
final class Gauge: MetricFamily {
    let name: String, help: String, labels: [String]
    let read: @Sendable () -> [([String], Double)]

    init(name: String, help: String, labels: [String], read: @escaping @Sendable () -> [([String], Double)]) {
        self.name = name
        self.help = help
        self.labels = labels
        self.read = read
    }

    func render(into text: inout String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        for (key, value) in read() {
            text += "\(name)\(Metrics.labelText(labels, key)) \(Metrics.format(value))\n"
        }
    }
}
