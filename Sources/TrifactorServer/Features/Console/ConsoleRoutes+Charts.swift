import Core
import Foundation
import HTTP
import WebUI

/// The dashboard's charts: `ConsoleStats` drawn by `WebUI.Chart`, each an SVG with a table of the same numbers
/// beside it, over the last 24 hours by hour or the last 7 days by day (`?span=week`). All in one read-only
/// transaction, so every chart shows the same moment.
extension ConsoleRoutes {
    /// The charts section of the dashboard.
    func charts(_ request: Request, _ s: Staffed) throws -> HTML {
        let span = request.query["span"].flatMap(ConsoleStats.Span.init(rawValue:)) ?? .day
        let now = admin.clock.now().millis
        // Only the span shown is read: each is a range read of the audit log.
        let (signIns, lockouts, methods, c, deliveries, webhooks) = try admin.transactions.read { db in
            (
                try ConsoleStats.signIns(span, now: now, on: db), try ConsoleStats.lockouts(span, now: now, on: db),
                try ConsoleStats.methods(on: db), try ConsoleStats.conversion(conversion, now: now, on: db),
                try ConsoleStats.deliveries(.week, now: now, on: db), try ConsoleStats.webhooks(.week, now: now, on: db)
            )
        }
        let day = span == .day
        let label: (Int64) -> String = { Self.bucketLabel($0, span: span) }
        let period = day ? "last 24 hours, by hour (UTC)" : "last 7 days, by day (UTC)"
        let bucketHeading = day ? "Hour (UTC)" : "Day (UTC)"
        var charts: [Chart] = [
            Chart(
                id: "sign-ins", title: "Sign-ins, \(period)",
                summary:
                    "Sign-ins that issued a session, wrong passwords, sign-ins refused while locked, and wrong second-factor proofs.",
                bucketHeading: bucketHeading, buckets: signIns.map { label($0.start) },
                series: [
                    .init("Succeeded", signIns.map { Double($0.succeeded) }),
                    .init("Wrong password", signIns.map { Double($0.failed) }),
                    .init("Refused while locked", signIns.map { Double($0.locked) }),
                    .init("Wrong second factor", signIns.map { Double($0.secondFactorFailed) }),
                ], totalHeading: "Total"),
            Chart(
                id: "lockouts", title: "Lockouts, \(period)",
                summary: "Attempts refused by a password or second-step lock, and second steps frozen.",
                bucketHeading: bucketHeading, buckets: lockouts.map { label($0.start) },
                series: [
                    .init("Password", lockouts.map { Double($0.password) }),
                    .init("Second factor", lockouts.map { Double($0.secondFactor) }),
                    .init("Frozen", lockouts.map { Double($0.frozen) }),
                ], totalHeading: "Total"),
            Chart(
                id: "methods", title: "Second-factor methods in use",
                summary: "Users who have at least one factor of each kind (a user with two kinds counts under both).",
                bucketHeading: "Method", buckets: methods.map { Self.methodName($0.kind) },
                series: [.init("Users", methods.map { Double($0.users) })]),
        ]
        let countries = c.countries.map { "+\($0.country)" }
        if !c.countries.isEmpty {
            charts.append(
                Chart(
                    id: "verifications",
                    title: "Phone verifications by country, last \(c.windowHours) hours",
                    summary: "Verifications started and completed per country calling code.",
                    bucketHeading: "Country code", buckets: countries,
                    series: [
                        .init("Started", c.countries.map { Double($0.started) }),
                        .init("Completed", c.countries.map { Double($0.completed) }),
                    ]))
            charts.append(
                Chart(
                    id: "conversion", title: "Conversion rate by country, last \(c.windowHours) hours",
                    summary:
                        "Completed per started. Below the line, with at least \(c.minimumVolume) started, new verifications to that country are refused (the SMS-pumping guard).",
                    bucketHeading: "Country code", buckets: countries,
                    series: [.init("Conversion", c.countries.map { $0.rate ?? 0 })],
                    threshold: .init(value: c.minimumRate, label: "Guard minimum \(Self.percent(c.minimumRate))"),
                    format: Self.percent))
        }
        let outcomes: [(ConsoleStats.DeliveryOutcome, String)] = [
            (.sent, "Sent"), (.undelivered, "Undelivered"), (.failed, "Failed"), (.waiting, "Waiting"),
            (.review, "Held for review"),
        ]
        if !deliveries.isEmpty {
            charts.append(
                Chart(
                    id: "deliveries", title: "Deliveries by provider and outcome, last 7 days",
                    summary: "Texts, calls and emails per provider and channel, by what became of them.",
                    bucketHeading: "Provider and channel",
                    buckets: deliveries.map { "\($0.provider ?? "none") · \($0.channel)" },
                    series: outcomes.map { outcome, name in
                        .init(name, deliveries.map { Double($0.counts[outcome] ?? 0) })
                    }, totalHeading: "Total"))
        }
        let troubled = webhooks.filter { $0.retrying > 0 || $0.failed > 0 || !$0.enabled }
        var sections: [HTML] = [
            .element(
                "p", [:],
                [
                    .text("Showing "), .element("strong", [:], [.text(day ? "the last 24 hours" : "the last 7 days")]),
                    .text(". "),
                    HostedPage.link(
                        day ? "Show the last 7 days" : "Show the last 24 hours",
                        day ? "/console?span=week#charts" : "/console#charts"),
                ])
        ]
        sections += charts.map(\.html)
        if troubled.isEmpty {
            sections.append(HostedPage.paragraph("No webhook endpoint is failing."))
        } else {
            sections.append(
                Chart(
                    id: "webhooks", title: "Webhook deliveries failing, last 7 days",
                    summary: "Per endpoint: messages being retried after a failed try, and messages given up on.",
                    bucketHeading: "Endpoint", buckets: troubled.map { $0.enabled ? $0.url : "\($0.url) (disabled)" },
                    series: [
                        .init("Retrying", troubled.map { Double($0.retrying) }),
                        .init("Failed", troubled.map { Double($0.failed) }),
                    ]
                ).html)
        }
        return ConsolePage.section("Charts", id: "charts", sections)
    }

    /// A bucket's label: its hour ("14:00") or its day ("6 Dec"), in UTC.
    static func bucketLabel(_ start: Int64, span: ConsoleStats.Span) -> String {
        let date = Date(timeIntervalSince1970: Double(start) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.day, .month, .hour], from: date)
        if span == .day { return String(format: "%02d:00", parts.hour ?? 0) }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(parts.day ?? 0) \(months[((parts.month ?? 1) - 1) % 12])"
    }

    /// A rate as a whole percentage.
    static let percent: @Sendable (Double) -> String = { "\(Int(($0 * 100).rounded()))%" }

    /// A factor kind as staff read it.
    static func methodName(_ kind: Factor.Kind) -> String {
        switch kind {
        case .phone: "Phone"
        case .totp: "Authenticator app"
        case .recoveryCode: "Recovery codes"
        case .device: "Device key"
        case .passkey: "Passkey"
        }
    }
}
