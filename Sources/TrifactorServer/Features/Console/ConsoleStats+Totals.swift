import Core
import Foundation
import Store

/// The console's totals that are not time series: second factors enrolled,
/// phone verification conversion per country, message deliveries and
/// webhook deliveries failing. Each table is read through its owner's
/// repository (the reads they offer the console are in
/// `ConsoleStats+Reads.swift`).
extension ConsoleStats {
    /// Second factors of one kind enrolled now: how many, and how many users have at least one.
    struct Methods: Sendable, Equatable {
        /// The kind of factor.
        let kind: Factor.Kind
        /// Factors of this kind enrolled.
        var factors = 0
        /// Users with at least one of them.
        var users = 0
    }

    /// One country's phone verifications over the conversion guard's window.
    struct CountryConversion: Sendable, Equatable {
        /// The country calling code (`44`), as the guard counts it.
        let country: Int
        /// Verifications started with a real (not test) number of this country.
        let started: Int
        /// Verifications to this country completed (the right code entered).
        let completed: Int
        /// Whether the guard refuses (or holds for review) new codes to this country now.
        let tripped: Bool

        /// Completed per started (nil with none started). It may pass 1 when codes sent before the window
        /// were entered in it: the guard counts the same way.
        var rate: Double? { started == 0 ? nil : Double(completed) / Double(started) }
    }

    /// Phone verification conversion as the SMS-pumping guard sees it: its settings and each country's counts.
    struct Conversion: Sendable, Equatable {
        /// The guard's window: whole hours, the current one included.
        let windowHours: Int
        /// The rate under which the guard trips: the threshold line.
        let minimumRate: Double
        /// The starts a country needs in the window before the guard judges it.
        let minimumVolume: Int
        /// Countries with any verification in the window, the most started first.
        let countries: [CountryConversion]
    }

    /// What became of a queued message.
    enum DeliveryOutcome: String, Sendable, CaseIterable {
        /// The provider took it, and sent no receipt saying it failed.
        case sent
        /// The provider took it, then reported it undeliverable (`DeliveryRoutes.undeliverable`).
        case undelivered
        /// Never taken: retries used up, or refused for good (such a message has no provider).
        case failed
        /// Due or being sent now.
        case waiting
        /// Held by the conversion guard until an operator releases or drops it.
        case review
    }

    /// Messages queued in the window for one provider and channel, by outcome (every outcome present).
    struct Deliveries: Sendable, Equatable {
        /// The provider that took the messages (`vonage`, `twilio`, `dev`…); nil for those none took.
        let provider: String?
        /// `sms`, `voice` or `email`.
        let channel: String
        /// Messages per outcome, every outcome present.
        var counts: [DeliveryOutcome: Int]
    }

    /// One webhook endpoint's deliveries in trouble.
    struct WebhookHealth: Sendable, Equatable {
        /// The endpoint's id, as the admin API and the CLI name it.
        let endpointID: String
        /// Where it posts to.
        let url: String
        /// False once it failed for the whole retry period (or an operator disabled it).
        let enabled: Bool
        /// Since when its deliveries fail (ms), nil while they succeed.
        let failingSince: Int64?
        /// Messages waiting for another try after at least one failed attempt.
        let retrying: Int
        /// Messages given up on (refused for good, or the endpoint failing a whole day), queued in the window.
        let failed: Int
    }

    /// Every second-factor kind with its enrolled count (zeros included), in the kinds' order.
    static func methods(on db: any SQLConnection) throws -> [Methods] {
        let counts = try FactorRepository.enrolledByKind(on: db)
        return Factor.Kind.allCases.map {
            Methods(kind: $0, factors: counts[$0]?.factors ?? 0, users: counts[$0]?.users ?? 0)
        }
    }

    /// Phone verifications per country over the guard's window ending at `now`, from the guard's own counts
    /// (`VerifyRepository.conversions`) and judged by its own rule (`ConversionGuard.isTripped`).
    static func conversion(
        _ settings: VerifySettings.ConversionGuard, now: Int64, on db: any SQLConnection
    ) throws -> Conversion {
        let countries = try VerifyRepository.conversions(hours: settings.windowHours, now: now, on: db)
            .map {
                CountryConversion(
                    country: $0.country, started: $0.started, completed: $0.completed,
                    tripped: settings.isTripped(started: $0.started, completed: $0.completed))
            }
            .sorted { ($0.started, $1.country) > ($1.started, $0.country) }
        return Conversion(
            windowHours: settings.windowHours, minimumRate: settings.minimumRate,
            minimumVolume: settings.minimumVolume, countries: countries)
    }

    /// Messages queued (or released) in `span`'s window ending at `now`, per provider and channel, by outcome;
    /// messages held for a later step or no longer wanted are not deliveries and are left out.
    static func deliveries(_ span: Span, now: Int64, on db: any SQLConnection) throws -> [Deliveries] {
        var grouped: [String: Deliveries] = [:]
        for row in try Outbox.outcomes(since: span.since(now: now), through: now, on: db) {
            let outcome: DeliveryOutcome
            switch row.status {
            case OutboxStatus.sent.rawValue:
                outcome = row.receipt.map(DeliveryRoutes.undeliverable.contains) == true ? .undelivered : .sent
            case OutboxStatus.failed.rawValue: outcome = .failed
            case OutboxStatus.review.rawValue: outcome = .review
            case OutboxStatus.pending.rawValue, OutboxStatus.sending.rawValue: outcome = .waiting
            default: continue
            }
            let key = "\(row.provider ?? "")\u{0}\(row.channel)"
            grouped[key, default: Deliveries(provider: row.provider, channel: row.channel, counts: [:])]
                .counts[outcome, default: 0] += row.count
        }
        return grouped.values.map { found in
            var all = found
            for outcome in DeliveryOutcome.allCases { all.counts[outcome] = found.counts[outcome] ?? 0 }
            return all
        }
        .sorted { ($0.provider ?? "~", $0.channel) < ($1.provider ?? "~", $1.channel) }
    }

    /// Every webhook endpoint with its retrying messages and those failed in `span`'s window ending at `now`,
    /// the endpoints in trouble first (disabled, then failing, then the rest, each by age).
    static func webhooks(_ span: Span, now: Int64, on db: any SQLConnection) throws -> [WebhookHealth] {
        let counts = try WebhookRepository.troubleCounts(failedSince: span.since(now: now), on: db)
        return try WebhookRepository.all(on: db).map { endpoint in
            WebhookHealth(
                endpointID: endpoint.id, url: endpoint.url, enabled: endpoint.status == .enabled,
                failingSince: endpoint.failingSince, retrying: counts[endpoint.id]?.retrying ?? 0,
                failed: counts[endpoint.id]?.failed ?? 0)
        }
        .enumerated()
        .sorted { a, b in
            let rank = { (h: WebhookHealth) in !h.enabled ? 0 : h.failingSince != nil || h.failed > 0 ? 1 : 2 }
            return (rank(a.element), a.offset) < (rank(b.element), b.offset)
        }
        .map(\.element)
    }
}
