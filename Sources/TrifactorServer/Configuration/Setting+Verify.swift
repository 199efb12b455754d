import Core
import Foundation

/// Phone verification: where codes may go, the SMS-pumping guard's budgets
/// and conversion watch, the token buckets per number, key, client and
/// country, the wrong-code cap, and the test numbers.
extension Setting {
    static let verifyGuards: [Setting] = [
        Setting(
            variable: "TRIFACTOR_VERIFY_COUNTRIES_ALLOW", flag: "--verify-countries-allow", valueName: "LIST",
            help: "Only these country calling codes receive codes (44,49,33)", defaultText: "all"
        ) { c, v in
            guard let codes = Self.callingCodes(v) else {
                return "TRIFACTOR_VERIFY_COUNTRIES_ALLOW must list country calling codes like 44,49,33."
            }
            c.verify.allowedCountries = codes
            return nil
        },
        Setting(
            variable: "TRIFACTOR_VERIFY_COUNTRIES_DENY", flag: "--verify-countries-deny", valueName: "LIST",
            help: "Country calling codes that never receive codes", defaultText: "none"
        ) { c, v in
            guard let codes = Self.callingCodes(v) else {
                return "TRIFACTOR_VERIFY_COUNTRIES_DENY must list country calling codes like 7,234."
            }
            c.verify.deniedCountries = codes
            return nil
        },
        budget(
            "TRIFACTOR_VERIFY_BUDGET_PREFIX", "--verify-budget-prefix",
            "Phone verifications per number prefix (country code and 6 national digits) per hour and per day",
            "20/h,100/d", \.prefix),
        budget(
            "TRIFACTOR_VERIFY_BUDGET_COUNTRY", "--verify-budget-country",
            "Phone verifications per country per hour and per day",
            "1000/h,10000/d", \.country),
        budget(
            "TRIFACTOR_VERIFY_BUDGET_TOTAL", "--verify-budget-total",
            "Phone verifications in total per hour and per day",
            "5000/h,50000/d", \.total),
        Setting(
            variable: "TRIFACTOR_VERIFY_CONVERSION", flag: "--verify-conversion", valueName: "RATE,VOLUME,HOURS",
            help: "Stop codes to a country that completes fewer than RATE of at least VOLUME verifications over HOURS",
            defaultText: "0.2,200,24"
        ) { c, v in
            let parts = v.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 3, let rate = Double(parts[0]), (0...1).contains(rate), let volume = Int(parts[1]),
                volume >= 1,
                let hours = Int(parts[2]), (1...168).contains(hours)
            else {
                return
                    "TRIFACTOR_VERIFY_CONVERSION must be RATE,VOLUME,HOURS like 0.2,200,24 (rate 0 to 1, hours 1 to 168)."
            }
            c.verify.conversion = .init(minimumRate: rate, minimumVolume: volume, windowHours: hours)
            return nil
        },
        Setting(
            variable: "TRIFACTOR_VERIFY_CONVERSION_ACTION", flag: "--verify-conversion-action",
            valueName: "refuse|hold",
            help:
                "What the conversion guard does with new codes to such a country: refuse them (429), or hold their messages for review",
            defaultText: "refuse"
        ) { c, v in
            guard ["refuse", "hold"].contains(v) else {
                return "TRIFACTOR_VERIFY_CONVERSION_ACTION must be refuse or hold."
            }
            c.verify.conversion.holdForReview = v == "hold"
            return nil
        },
    ]

    static let verifyLimits: [Setting] = [
        rate("TRIFACTOR_VERIFY_NUMBER_BURST", "--verify-number-burst", "Phone verifications per number in a burst", "5")
        { $0.verify.perNumberBurst = $1 },
        rate(
            "TRIFACTOR_VERIFY_NUMBER_RATE", "--verify-number-rate",
            "Phone verifications per number per second after the burst", "0.00833"
        ) { $0.verify.perNumberRate = $1 },
        rate("TRIFACTOR_VERIFY_KEY_BURST", "--verify-key-burst", "Phone verifications per API key in a burst", "100") {
            $0.verify.perKeyBurst = $1
        },
        rate(
            "TRIFACTOR_VERIFY_KEY_RATE", "--verify-key-rate",
            "Phone verifications per API key per second after the burst", "10"
        ) { $0.verify.perKeyRate = $1 },
        rate(
            "TRIFACTOR_VERIFY_IP_BURST", "--verify-ip-burst",
            "Phone verification starts and rejected credentials per client IP in a burst", "30"
        ) { $0.verify.perIPBurst = $1 },
        rate(
            "TRIFACTOR_VERIFY_IP_RATE", "--verify-ip-rate",
            "Phone verification starts per client IP per second after the burst", "0.5"
        ) { $0.verify.perIPRate = $1 },
        rate(
            "TRIFACTOR_VERIFY_COUNTRY_BURST", "--verify-country-burst",
            "Phone verifications per country calling code in a burst", "200"
        ) { $0.verify.perCountryBurst = $1 },
        rate(
            "TRIFACTOR_VERIFY_COUNTRY_RATE", "--verify-country-rate",
            "Phone verifications per country calling code per second after the burst", "2"
        ) { $0.verify.perCountryRate = $1 },
        int(
            "TRIFACTOR_VERIFY_MAX_FAILURES", "--verify-max-failures",
            "Wrong codes per number per day before it is refused", "10", 1...1000
        ) { $0.verify.maxFailuresPerNumber = $1 },
        Setting(
            variable: "TRIFACTOR_TEST_NUMBERS", flag: "--test-numbers", valueName: "LIST",
            help: "Test numbers with fixed codes that never send: 447400123999=1234,...", defaultText: "none"
        ) { c, v in
            var numbers: [String: String] = [:]
            for item in v.split(separator: ",") where !item.trimmingCharacters(in: .whitespaces).isEmpty {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let first = parts[0].first, first != "0", parts[0].count >= 7,
                    parts[0].count <= 15,
                    parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
                    VerifyWorkflow.isValidCode(parts[1])
                else {
                    return
                        "TRIFACTOR_TEST_NUMBERS must look like 447400123999=1234,15555550100=654321 (E.164 digits = a 4-10 character code)."
                }
                numbers[parts[0]] = parts[1]
            }
            c.verify.testNumbers = numbers
            return nil
        },
    ]

    /// An hourly and daily budget of the SMS-pumping guard (`N/h,N/d`).
    private static func budget(
        _ variable: String, _ flag: String, _ help: String, _ def: String,
        _ field: any WritableKeyPath<VerifySettings.Budgets, VerifySettings.Budget> & Sendable
    ) -> Setting {
        Setting(variable: variable, flag: flag, valueName: "N/h,N/d", help: help, defaultText: def) { c, v in
            guard let budget = Self.budget(v) else { return "\(variable) must be like \(def)." }
            c.verify.budgets[keyPath: field] = budget
            return nil
        }
    }
}

extension Setting {
    /// "44, 49,33" → {44, 49, 33}; nil unless every entry is a calling code (1 to 3 digits, no leading zero).
    static func callingCodes(_ text: String) -> Set<Int>? {
        let entries = text.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "+", with: "")
        }
        guard !entries.isEmpty else { return nil }
        var codes = Set<Int>()
        for entry in entries {
            guard (1...3).contains(entry.count), entry.first != "0", let code = Int(entry) else { return nil }
            codes.insert(code)
        }
        return codes
    }
}

extension Setting {
    /// "20/h,100/d" → a budget of 20 an hour and 100 a day.
    static func budget(_ text: String) -> VerifySettings.Budget? {
        var hour: Double?
        var day: Double?
        for part in text.split(separator: ",") {
            let pieces = part.trimmingCharacters(in: .whitespaces).split(separator: "/")
            guard pieces.count == 2, let n = Double(pieces[0]), n >= 1, n <= 10_000_000 else { return nil }
            switch pieces[1] {
            case "h": hour = n
            case "d": day = n
            default: return nil
            }
        }
        guard let hour, let day, hour <= day else { return nil }
        return .init(perHour: hour, perDay: day)
    }
}
