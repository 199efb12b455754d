import API
import Core
import Foundation
import Store

/// `trifactord review list [--json]`, `review release ID`, `review drop ID`:
/// the verifications the conversion guard holds for an operator's decision.
enum ReviewCommand {
    static let usage =
        "Usage: trifactord review list [--limit N] [--json] | review release REQUEST_ID | review drop REQUEST_ID"

    static func run(_ arguments: [String], environment: [String: String]) throws {
        let sub = arguments.first ?? ""
        let (listing, remaining) = try ListingOptions.parse(Array(arguments.dropFirst()))
        switch sub {
        case "list":
            let config = try ConfigurationParser.parse(arguments: remaining, environment: environment)
            let items = try ListCommands.withDatabase(config) { db in
                try db.read { try ReviewQueue.list(limit: listing.limit, on: $0) }
            }
            if listing.json {
                let objects = items.map {
                    [
                        "request_id": $0.requestID, "channel": $0.channel, "to": $0.to,
                        "created_at": WireJSON.format(Date(millis: $0.createdAt)),
                    ]
                }
                print(
                    String(
                        decoding: try JSONSerialization.data(
                            withJSONObject: objects, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self))
                return
            }
            if items.isEmpty {
                print("Nothing is held for review.")
                return
            }
            for item in items {
                print(
                    [item.requestID, item.channel, "+" + item.to, WireJSON.format(Date(millis: item.createdAt))].joined(
                        separator: "  "))
            }
        case "release", "drop":
            guard let id = remaining.first, !id.hasPrefix("-"), id.count <= 64,
                id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else {
                throw ConfigurationParser.Failure(
                    description:
                        "Name the verification: trifactord review \(sub) REQUEST_ID (see trifactord review list).")
            }
            let config = try ConfigurationParser.parse(
                arguments: Array(remaining.dropFirst()), environment: environment)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let outcome = try ListCommands.withDatabase(config) { db in
                try db.transaction {
                    sub == "release"
                        ? try ReviewQueue.release(VerificationID(id), now: now, on: $0)
                        : try ReviewQueue.drop(VerificationID(id), now: now, on: $0)
                }
            }
            switch outcome {
            case .released(let sent):
                print(
                    "Released \(id): \(sent) message\(sent == 1 ? "" : "s") sent now, later steps follow the workflow.")
            case .dropped: print("Dropped \(id): its messages will never be sent.")
            case .ended: print("\(id) ended meanwhile: its messages were dropped.")
            case .notFound:
                throw ConfigurationParser.Failure(
                    description: "No verification \(id) is held for review (see trifactord review list).")
            }
        default:
            throw ConfigurationParser.Failure(
                description: "Unknown review command \"\(sub)\": use list, release or drop.")
        }
    }
}
