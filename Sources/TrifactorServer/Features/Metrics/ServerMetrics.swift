import Core
import Foundation
import Metrics

/// The authentication counters of `/metrics`, moved by the audit log: every
/// authentication event is audited, so every one is counted, in the process
/// that handled it (Prometheus sums the instances of a cluster).
enum ServerMetrics {
    static let events = Metrics.shared.counter(
        "trifactor_auth_events_total", "Audited authentication events, by kind and outcome.",
        labels: ["kind", "outcome"])
    static let signIns = Metrics.shared.counter(
        "trifactor_signins_total",
        "Sign-in steps by method (password, passkey, push, second_factor, or the methods of an issued session such as pwd+otp) and outcome.",
        labels: ["method", "outcome"])
    static let lockouts = Metrics.shared.counter(
        "trifactor_lockouts_total", "Attempts refused because an account's step is locked, by step.",
        labels: ["step"])
    static let pushApprovals = Metrics.shared.counter(
        "trifactor_push_approvals_total", "Push approvals by outcome (sent, approved, denied, wrong_number).",
        labels: ["outcome"])
    static let deliveries = Metrics.shared.counter(
        "trifactor_outbox_deliveries_total",
        "Messages this instance handed to a sender, by channel, provider and outcome (sent, retry, failed).",
        labels: ["channel", "provider", "outcome"])
    static let idempotentRequests = Metrics.shared.counter(
        "trifactor_idempotent_requests_total",
        "Requests with an Idempotency-Key, by operation and outcome (kept: a first answer stored; replayed; not_kept: a refusal, key freed; reused: 422; refused: a malformed key or a body over 16 KiB).",
        labels: ["operation", "outcome"])
    static let databaseUnavailable = Metrics.shared.counter(
        "trifactor_database_unavailable_total",
        "Transactions refused because the database was away or busy past its timeout.")

    /// Registers every family now, so a scrape lists them before their first event.
    static func register() {
        _ = (events, signIns, lockouts, pushApprovals, deliveries, idempotentRequests, databaseUnavailable)
    }

    /// Counts one audited event under the families it belongs to.
    static func count(_ event: AuditEvent) {
        events.add([event.kind.rawValue, event.outcome.rawValue])
        let detail = event.detail ?? ""
        switch event.kind {
        case .signInSucceeded:
            if let methods = detail.split(separator: " ").first(where: { $0.hasPrefix("methods=") })?.dropFirst(8) {
                signIns.add([methods.replacingOccurrences(of: ",", with: "+"), "success"])
            } else {
                signIns.add(["password", "second_factor_required"])
            }
        case .signInFailed: signIns.add([detail.hasPrefix("passkey") ? "passkey" : "password", "failure"])
        case .signInRateLimited: signIns.add(["password", "rate_limited"])
        case .signInLocked:
            signIns.add(["password", "locked"])
            lockouts.add(["password"])
        case .mfaSucceeded: signIns.add(["second_factor", "success"])
        case .mfaFailed: signIns.add(["second_factor", "failure"])
        case .mfaLocked:
            signIns.add(["second_factor", "locked"])
            lockouts.add(["second_factor"])
        case .pushSent: pushApprovals.add(["sent"])
        case .pushApproved: pushApprovals.add(["approved"])
        case .pushDenied: pushApprovals.add(["denied"])
        case .pushWrongNumber: pushApprovals.add(["wrong_number"])
        default: break
        }
    }

    /// This process's resident memory in bytes, from `/proc/self/statm`.
    static func residentBytes() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return pages * Double(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// File descriptors this process has open.
    static func openDescriptors() -> Double {
        Double((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0)
    }
}
