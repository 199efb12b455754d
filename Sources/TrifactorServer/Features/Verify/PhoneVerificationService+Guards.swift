import Core
import Foundation
import Phone
import Store
import Logging

/// The SMS-pumping guards of every verification start: where codes may go
/// (`DestinationPolicy`), what may be spent (budgets per number prefix,
/// country and in total), and whether a country still converts (codes
/// entered versus sent).
extension PhoneVerificationService {
    /// Refuses, before anything is written, steps to numbers the destination policy excludes: a 422 naming
    /// each step, audited.
    func refuseUnreachable(_ s: Start, testNumbers: [String: String], client: AuditContext) throws {
        let destinations = DestinationPolicy(allowedCountries: settings.allowedCountries, deniedCountries: settings.deniedCountries)
        let unreachable: [FieldProblem] = s.steps.enumerated().compactMap { index, step in
            guard testNumbers[step.to] == nil, let number = try? PhoneNumber(parsing: "+" + step.to),
                  let reason = destinations.refusal(number) else { return nil }
            return FieldProblem(name: "workflow[\(index)].to", reason: reason)
        }
        guard !unreachable.isEmpty else { return }
        try transactions.write {
            try AuditLog.append(client.event(.verifyRefused, .denied, detail: "destination: \(unreachable.map(\.reason).joined(separator: "; "))"),
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
            if seen.started >= conversion.minimumVolume, Double(seen.completed) < conversion.minimumRate * Double(seen.started) {
                logger.log("warn", "verify_conversion_low", ["country": .int(code), "started": .int(seen.started), "completed": .int(seen.completed),
                                                               "action": .string(conversion.holdForReview ? "held for review" : "refused")])
                guard conversion.holdForReview else { throw PhoneVerificationFailure.budgetExceeded(scope: "conversion:\(code)", retryAfter: 3600) }
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
                    logger.log("warn", "verify_budget_exceeded", ["scope": .string(scope), "window": .string(window == "h" ? "hour" : "day"),
                                                                     "budget": .int(Int(amount))])
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
}
