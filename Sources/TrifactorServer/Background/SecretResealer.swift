import Core
import Crypto
import Foundation
import Logging
import Store

/// Moves secrets at rest to the active key after `trifactord keys rotate`,
/// in the background, once the key has been in the file for `grace` (every
/// instance has read it by then): each pass reads the sealed TOTP secrets page by page
/// and re-seals those under an older key, one page per transaction, each row
/// only if it still holds the value read (compare-and-set, so two instances
/// or a concurrent enrollment never lose a write). Once a whole pass finds
/// nothing under an older key (the pass after the one that moved the last
/// of them, so a second full read confirms it), and the active key is older than `grace`
/// (long enough for every instance to have read it), the older keys are
/// retired: removed from the key file, so their bytes exist nowhere.
struct SecretResealer: Sendable {
    let transactions: Transactions
    let ring: KeyRing
    let logger: Logger
    /// How long after its creation the active key must have been sealing before older keys may go.
    var grace: TimeInterval = 60
    var page = 500

    /// The tables holding sealed secrets: their key column and the factor id the seal is bound to.
    static let tables = [
        (table: "mfa_factors", key: "id", factor: "id"),
        (table: "mfa_enrollments", key: "token_hash", factor: "factor_id"),
        // The OpenID Provider's signing keys, each bound to its kid.
        (table: "oidc_signing_keys", key: "kid", factor: "kid"),
        // Webhook endpoints' secrets, each bound to the endpoint's id (the previous secret of a rotation is not
        // moved: it signs for a day at most).
        (table: "webhook_endpoints", key: "id", factor: "id"),
    ]

    struct Report: Equatable {
        var resealed = 0
        /// Rows still under an older key after the pass (a concurrent write, or a failure).
        var remaining = 0
        var retired: [String] = []
    }

    /// One pass over every sealed secret; nothing to do while the ring has one key.
    @discardableResult
    func pass(now: Date = Date()) throws -> Report {
        try ring.reload()
        var report = Report()
        guard ring.entries.count > 1, let activeEntry = ring.entries.last else { return report }
        // Every instance (and every host's copy of the file) gets `grace` to learn the new key
        // before anything moves to it: until then an instance without it could not open them.
        guard now.timeIntervalSince(activeEntry.created) >= grace else { return report }
        let active = activeEntry.id
        // A value naming a key the file lacks (a restored backup, a host's stale copy) cannot move: it is
        // counted as remaining, which keeps the older keys, without re-reading the file for each such row.
        let known = Set(ring.entries.map(\.id))
        var unknown = 0
        for t in Self.tables {
            var cursor = ""
            while true {
                let rows = try transactions.read { db in
                    try db.query(
                        """
                        SELECT \(t.key) AS k, \(t.factor) AS f, secret_sealed AS s FROM \(t.table)
                        WHERE secret_sealed IS NOT NULL AND \(t.key) > $1 ORDER BY \(t.key) LIMIT $2
                        """, [.text(cursor), .int(Int64(page))]
                    ).map { (try $0.text("k"), try $0.text("f"), try $0.text("s")) }
                }
                guard let last = rows.last else { break }
                cursor = last.0
                let named = rows.compactMap { row in
                    Data(base64Encoded: row.2).map { (row, KeyRing.keyID(of: Array($0)).id) }
                }
                let stale = named.filter { $0.1 != active && known.contains($0.1) }.map(\.0)
                unknown += named.count { !known.contains($0.1) }
                if stale.isEmpty { continue }
                let moved = try transactions.write { db -> Int in
                    var moved = 0
                    for (key, factor, old) in stale {
                        let ad = TOTPFactor.associatedData(FactorID(factor))
                        guard let bytes = Data(base64Encoded: old),
                            var plain = try? ring.open(Array(bytes), associatedData: ad)
                        else {
                            logger.log(
                                .error, "reseal_failed",
                                ["table": .string(t.table), "row": .string(String(key.prefix(8)))])
                            continue
                        }
                        defer { plain.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
                        let fresh = Data(try ring.seal(plain, associatedData: ad)).base64EncodedString()
                        moved += try db.execute(
                            "UPDATE \(t.table) SET secret_sealed = $3 WHERE \(t.key) = $1 AND secret_sealed = $2",
                            [.text(key), .text(old), .text(fresh)])
                    }
                    return moved
                }
                report.resealed += moved
                report.remaining += stale.count - moved
            }
        }
        report.remaining += unknown
        if unknown > 0 {
            logger.log(.error, "reseal_unknown_key", ["count": .int(unknown), "active": .string(active)])
        }
        if report.resealed > 0 {
            logger.log(.info, "secrets_resealed", ["count": .int(report.resealed), "key": .string(active)])
        }
        if report.resealed == 0, report.remaining == 0, let path = ring.path {
            // Under the file's lock, from the file as it is now: a `keys rotate` that ran during this
            // pass added a key that must survive (and then nothing is retired until it has sealed).
            report.retired = try KeyFile.withLock(path) {
                let current = try KeyFile.read(path)
                guard current.last?.id == active, current.count > 1 else { return [] }
                try KeyFile.write([current.last!], to: path)
                return current.dropLast().map(\.id)
            }
            try ring.reload()
            if !report.retired.isEmpty {
                logger.log(
                    .info, "keys_retired",
                    ["keys": .string(report.retired.joined(separator: ",")), "active": .string(active)])
            }
        }
        return report
    }
}
