import Foundation
import Phone

/// Where codes may go: the first SMS-pumping guard. Premium-rate,
/// shared-cost and unknown line types are refused on every channel (a call
/// or text to them earns their owner money), and an operator may allow only
/// some country calling codes or deny some.
struct DestinationPolicy: Sendable, Equatable {
    /// When set, only these country calling codes.
    var allowedCountries: Set<Int>?
    var deniedCountries: Set<Int> = []

    static let refusedKinds: Set<PhoneNumber.Kind> = [.premiumRate, .sharedCost, .unknown]

    /// Why `number` may not receive codes, as the field's reason; nil when it may.
    func refusal(_ number: PhoneNumber) -> String? {
        if Self.refusedKinds.contains(number.kind) {
            return
                "is a \(number.kind.rawValue.replacingOccurrences(of: "_", with: " ")) number, which cannot receive codes"
        }
        if deniedCountries.contains(number.countryCallingCode)
            || allowedCountries.map({ !$0.contains(number.countryCallingCode) }) == true
        {
            return "is in a country (+\(number.countryCallingCode)) this service does not send codes to"
        }
        return nil
    }
}
