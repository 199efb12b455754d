import Core
import Foundation
import Logging
import Phone
import Store

/// The SMS-pumping guards of every verification start: where codes may go
/// (`DestinationPolicy`), the token buckets per client, key, number and
/// country, what may be spent (budgets per number prefix, country and in
/// total), and whether a country still converts (codes entered versus sent).
extension PhoneVerificationService {
    /// Refuses, before anything is written, steps to numbers the destination policy excludes: a 422 naming
    /// each step, audited.
    func refuseUnreachable(_ s: Start, testNumbers: [String: String], client: AuditContext) throws {
        let destinations = DestinationPolicy(
            allowedCountries: settings.allowedCountries, deniedCountries: settings.deniedCountries)
        let unreachable: [FieldProblem] = s.steps.enumerated().compactMap { index, step in
            guard testNumbers[step.to] == nil, let number = try? PhoneNumber(parsing: "+" + step.to),
                let reason = destinations.refusal(number)
            else { return nil }
            return FieldProblem(name: "workflow[\(index)].to", reason: reason)
        }
        guard !unreachable.isEmpty else { return }
        try transactions.write {
            try AuditLog.append(
                client.event(
                    .verifyRefused, .denied, detail: "destination: \(unreachable.map(\.reason).joined(separator: "; "))"
                ),
                at: clock.now().millis, on: $0)
        }
        throw PhoneVerificationFailure.invalidParameters(unreachable)
    }

    /// Inside the start's transaction: the conversion check, then the budgets (per number prefix, i.e. the
    /// country code and the first six national digits; per country; in total; each per hour and per day),
    /// then the start is counted for its countries. Over a budget or under the conversion threshold nothing
    /// is sent to that scope (text or call) and the operator hears of it in the log. Returns true when the
    /// conversion guard holds the request's messages for review instead of refusing it.
    func spend(_ s: Start, testNumbers: [String: String], now ms: Int64, on db: any SQLConnection) throws -> Bool {
        let real = zip(s.steps, s.countryCodes).filter { testNumbers[$0.0.to] == nil }
        let countries = Set(real.map(\.1)).sorted()
        let conversion = settings.conversion
        var review = false
        for code in countries {
            let seen = try VerifyRepository.conversion(country: code, hours: conversion.windowHours, now: ms, on: db)
            if conversion.isTripped(started: seen.started, completed: seen.completed) {
                logger.log(
                    .warning, "verify_conversion_low",
                    [
                        "country": .int(code), "started": .int(seen.started), "completed": .int(seen.completed),
                        "action": .string(conversion.holdForReview ? "held for review" : "refused"),
                    ])
                guard conversion.holdForReview else {
                    throw PhoneVerificationFailure.budgetExceeded(scope: "conversion:\(code)", retryAfter: 3600)
                }
                review = true
            }
        }
        let b = settings.budgets
        var scopes: [(String, VerifySettings.Budget)] = [("total", b.total)]
        for (step, code) in real {
            scopes.append(("prefix:\(code)\(step.to.dropFirst(String(code).count).prefix(6))", b.prefix))
            scopes.append(("country:\(code)", b.country))
        }
        var taken = Set<String>()
        for (scope, budget) in scopes where taken.insert(scope).inserted {
            for (window, amount, seconds) in [("h", budget.perHour, 3600.0), ("d", budget.perDay, 86_400.0)] {
                let limit = RateLimiter.Limit(burst: amount, rate: amount / seconds)
                if let wait = try RateLimiter.take("budget:\(window):\(scope)", limit: limit, nowMillis: ms, on: db) {
                    logger.log(
                        .warning, "verify_budget_exceeded",
                        [
                            "scope": .string(scope), "window": .string(window == "h" ? "hour" : "day"),
                            "budget": .int(Int(amount)),
                        ])
                    throw PhoneVerificationFailure.budgetExceeded(scope: scope, retryAfter: wait)
                }
            }
        }
        for code in countries { try VerifyRepository.countConversion(country: code, completed: false, now: ms, on: db) }
        return review
    }

    /// A completed request counts for the conversion of its numbers' countries.
    func countCompleted(_ record: VerifyRecord, now: Int64, on db: any SQLConnection) throws {
        let testNumbers = testNumbers(for: record.apiKeyID)
        for number in record.numbers where testNumbers[number] == nil {
            if let country = try? PhoneNumber(parsing: "+" + number).countryCallingCode {
                try VerifyRepository.countConversion(country: country, completed: true, now: now, on: db)
            }
        }
    }

    /// Token buckets, taken in a fixed order (so two instances never lock
    /// bucket rows in opposite orders): per IP and key `before` the
    /// concurrency check, per number (with the failure cap) and per country
    /// after it, so a refused duplicate spends nothing of the number's budget.
    /// Returns true when the conversion guard holds the request's messages for review.
    @discardableResult
    func limits(before: Bool, _ s: Start, key: APIKey, client: AuditContext, now: Date, on db: any SQLConnection) throws
        -> Bool
    {
        let v = settings
        let ms = now.millis
        var buckets: [(String, RateLimiter.Limit)] = []
        if before {
            buckets = [("verify:ip:\(client.clientKey)", .init(burst: v.perIPBurst, rate: v.perIPRate))]
            // Trifactor's own flows are not one tenant: their users are limited per IP and number.
            if key.id != APIKey.internalMFA.id {
                buckets.append(("verify:key:\(key.id.raw)", .init(burst: v.perKeyBurst, rate: v.perKeyRate)))
            }
        } else {
            for number in Set(s.steps.map(\.to)).sorted() where testNumbers(for: key.id)[number] == nil {
                if try VerifyRepository.failures(number: number, now: ms, on: db) >= v.maxFailuresPerNumber {
                    throw PhoneVerificationFailure.rateLimited(retryAfter: 3600)
                }
                buckets.append(("verify:number:\(number)", .init(burst: v.perNumberBurst, rate: v.perNumberRate)))
            }
            for code in Set(s.countryCodes).sorted() {
                buckets.append(("verify:country:\(code)", .init(burst: v.perCountryBurst, rate: v.perCountryRate)))
            }
        }
        for (key, limit) in buckets {
            if let wait = try RateLimiter.take(key, limit: limit, nowMillis: ms, on: db) {
                throw PhoneVerificationFailure.rateLimited(retryAfter: wait)
            }
        }
        return before ? false : try spend(s, testNumbers: testNumbers(for: key.id), now: ms, on: db)
    }
}

extension VerifySettings.ConversionGuard {
    /// The guard's one rule, for the start it judges and the console that shows it: a country with at least
    /// `minimumVolume` verifications started in the window, of which fewer than `minimumRate` were completed.
    func isTripped(started: Int, completed: Int) -> Bool {
        started >= minimumVolume && Double(completed) < minimumRate * Double(started)
    }
}
