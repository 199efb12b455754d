import Core
import Crypto
import Foundation
import HTTP
import Metrics
import Store

/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) on the
/// operations that send a message or create a challenge: a client that lost
/// an answer (a cut connection, an instance killed mid-way, a timeout)
/// repeats the request with the same key and gets the first answer again,
/// with `Idempotent-Replayed: true`, and nothing is sent twice.
///
/// The handler runs in one transaction with the key's row (see
/// `Transactions.request`), so the effect and the stored answer commit
/// together or not at all: there is no moment at which a message is queued
/// but its key not yet recorded.
/// - A 2xx answer is kept for 24 hours; its body holds no bearer secret (the
///   operations whose answers do, such as a TOTP enrollment, do not take
///   keys), and a user's kept answers go with their account.
/// - A refusal (a 4xx, or a 503 such as `delivery_unavailable`) is not
///   kept: what it wrote (an attempt counted, an audit entry) stays, and the
///   key is free for a corrected retry.
/// - The database going away, or a bug, rolls everything back, key
///   included: a retry runs afresh.
/// - The same key with another body (or path parameter) is refused with
///   422; a JSON body is compared as an object (key order and spacing do
///   not count). Keys are kept apart per operation and per caller (the
///   session, the API key, or none).
/// - Two requests with one key at once: the second waits for the first and
///   replays its answer (on SQLite, for up to its 5 s busy timeout).
struct Idempotency: Sendable {
    static let header = "idempotency-key"
    static let replayedHeader = "Idempotent-Replayed"
    /// How long an answer is kept (milliseconds).
    static let lifetime: Int64 = 86_400_000

    let transactions: Transactions
    let clock: Clock

    /// Runs `handler` under the request's `Idempotency-Key`, if it has one.
    /// - Parameters:
    ///   - operation: the route (`POST /v2/verify`), so one key means one thing.
    ///   - caller: who the key belongs to (`session:<id>`, `key:<id>`, or `anonymous`).
    ///   - user: the signed-in user, whose kept answers go when the account is erased.
    ///   - answer: maps the handler's failures to the errors the route answers with.
    /// - Throws: `IdempotencyFailure`, or what `answer` makes of the handler's failure.
    func run(
        _ request: Request, operation: String, caller: String, user: String? = nil, answer: (any Error) -> any Error,
        _ handler: () throws -> Response
    ) throws -> Response {
        guard let raw = request.header(Self.header) else { return try handler() }
        let key: String
        let fingerprint: String
        do {
            key = try Self.key(raw)
            fingerprint = try Self.fingerprint(request)
        } catch {
            ServerMetrics.idempotentRequests.add([operation, "refused"])
            throw error
        }
        let id = SHA256.hex([operation, caller, key].joined(separator: "\n"))
        let now = clock.now().millis
        let outcome: Outcome
        do {
            outcome = try transactions.request { db throws -> Outcome in
                if let kept = try Self.claim(
                    id, fingerprint: fingerprint, user: user, operation: operation, now: now, on: db)
                {
                    return kept
                }
                let response: Response
                do {
                    response = try handler()
                } catch {
                    // A refusal (any problem the route answers, 503 `delivery_unavailable` too) keeps what it wrote,
                    // such as an attempt counted or its audit entry, and frees the key; the database
                    // going away or a bug rolls everything back.
                    let failure = answer(error)
                    if case CommonFailure.unavailable = error { throw failure }
                    guard failure is any HTTPResponseError else { throw failure }
                    try db.execute("DELETE FROM idempotency_keys WHERE id = $1", [.text(id)])
                    return .failed(failure)
                }
                // An answer the server cannot send as it is (it becomes a 500) keeps nothing either.
                if response.status >= 500 || response.encodingFailure != nil { throw Unanswerable(response: response) }
                guard (200..<300).contains(response.status), response.deferral == nil else {
                    try db.execute("DELETE FROM idempotency_keys WHERE id = $1", [.text(id)])
                    return .notKept(response)
                }
                // An anonymous request that acted for a user (a pending sign-in's) keeps its answer under them.
                try db.execute(
                    "UPDATE idempotency_keys SET status = $2, headers = $3, body = $4, user_id = COALESCE(user_id, $5) WHERE id = $1",
                    [
                        .text(id), .int(Int64(response.status)), .text(Self.encode(response.headers)),
                        .text(Data(response.body).base64EncodedString()),
                        SQLValue(RequestTransaction.current?.owner?.raw),
                    ])
                return .kept(response)
            }
        } catch let unanswerable as Unanswerable {
            return unanswerable.response
        }
        ServerMetrics.idempotentRequests.add([operation, outcome.label])
        switch outcome {
        case .kept(let response), .notKept(let response): return response
        case .failed(let failure): throw failure
        case .replayed(var response):
            response.headers.append((Self.replayedHeader, "true"))
            return response
        }
    }

    /// Rolls the request's transaction back while still sending its (500) answer.
    private struct Unanswerable: Error {
        let response: Response
    }

    private enum Outcome {
        /// A first 2xx answer, stored.
        case kept(Response)
        /// Any other answer: the key is free again.
        case notKept(Response)
        case failed(any Error)
        case replayed(Response)

        /// The outcome label of `trifactor_idempotent_requests_total`.
        var label: String {
            switch self {
            case .kept: "kept"
            case .notKept, .failed: "not_kept"
            case .replayed: "replayed"
            }
        }
    }

    /// Takes the key for this request (nil: run the handler), or finds the answer kept for it.
    /// On PostgreSQL the insert waits for a request holding the same key until it commits or
    /// rolls back; a row that expired and was purged in between is taken afresh.
    private static func claim(
        _ id: String, fingerprint: String, user: String?, operation: String, now: Int64,
        on db: any SQLConnection
    ) throws -> Outcome? {
        try db.execute("DELETE FROM idempotency_keys WHERE id = $1 AND expires_at <= $2", [.text(id), .int(now)])
        for _ in 0..<3 {
            let claimed =
                try db.execute(
                    """
                    INSERT INTO idempotency_keys (id, fingerprint, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (id) DO NOTHING
                    """, [.text(id), .text(fingerprint), SQLValue(user), .int(now), .int(now + lifetime)]) == 1
            if claimed { return nil }
            // A committed row always holds its answer: the claim and the answer commit together.
            guard
                let row = try db.queryOne(
                    "SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE id = $1", [.text(id)]),
                let status = try row.optionalInt("status")
            else { continue }
            guard try row.text("fingerprint") == fingerprint else {
                ServerMetrics.idempotentRequests.add([operation, "reused"])
                throw IdempotencyFailure.reused
            }
            return .replayed(
                Response(
                    status: Int(status), headers: decode(try row.text("headers")),
                    body: Array(Data(base64Encoded: try row.text("body")) ?? Data())))
        }
        throw IdempotencyFailure.inProgress
    }

    /// The key inside the header: a structured-field string (`"…"`, RFC 8941)
    /// or the bare token many clients send; 1 to 255 visible ASCII characters.
    static func key(_ raw: String) throws(IdempotencyFailure) -> String {
        var key = Substring(raw)
        if key.count >= 2, key.first == "\"", key.last == "\"" { key = key.dropFirst().dropLast() }
        guard (1...255).contains(key.utf8.count),
            key.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { throw .invalidKey }
        return String(key)
    }

    private static func encode(_ headers: [(name: String, value: String)]) -> String {
        String(
            decoding: (try? JSONEncoder().encode(headers.map { [$0.name, $0.value] })) ?? Data("[]".utf8), as: UTF8.self
        )
    }

    private static func decode(_ text: String) -> [(name: String, value: String)] {
        ((try? JSONDecoder().decode([[String]].self, from: Data(text.utf8))) ?? []).compactMap {
            $0.count == 2 ? ($0[0], $0[1]) : nil
        }
    }
}

/// An `Idempotency-Key` the server will not take.
enum IdempotencyFailure: Error, Equatable {
    /// Not 1 to 255 visible ASCII characters.
    case invalidKey
    /// Used before for another request body (or path parameter) of the same operation.
    case reused
    /// The key's row changed under three claims in a row (another request with it kept running).
    case inProgress
    /// A body over `Idempotency.maxBodyBytes`: far more than any keyed operation takes.
    case bodyTooLarge
}
