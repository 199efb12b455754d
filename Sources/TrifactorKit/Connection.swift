import API
import Foundation

/// The HTTP calls under every client: JSON in, JSON or problem+json out,
/// each mapped to a value or a `TrifactorError`.
struct Connection: Sendable {
    let server: URL
    let transport: any HTTPTransport
    /// Sent as `User-Agent`, so the user's session list says what signed in.
    let userAgent: String
    /// Headers a backend-for-frontend adds for its browser (`X-Forwarded-For`, `X-Forwarded-User-Agent`).
    var forwarded: [String: String] = [:]

    /// No body to send.
    struct Empty: Codable, Sendable {}

    /// How many times a `repeatable` request is sent again after losing its answer.
    static let repeats = 2
    /// The longest pause before a repeat (seconds); a server asking for longer gets its answer passed on at once.
    static let longestPause: TimeInterval = 2

    /// Sends `body` to `path` and decodes a 2xx answer as `Answer` (use `raw` when none is expected).
    /// A `repeatable` request (one that sends a message or creates a challenge) carries an
    /// `Idempotency-Key` and is sent again with it when its answer is lost (see `exchange`).
    /// - Throws: `TrifactorError` `.server` for a problem, `.transport`, or `.unexpectedResponse`.
    func call<Answer: Decodable>(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (some Encodable & Sendable)? = Empty?.none,
        headers: [String: String] = [:], token: String? = nil, timeout: TimeInterval = 30, repeatable: Bool = false,
        as: Answer.Type = Answer.self
    ) async throws(TrifactorError) -> Answer {
        let response = try await raw(
            method, path, query: query, body: body, headers: headers, token: token, timeout: timeout,
            repeatable: repeatable)
        guard response.header("content-type")?.hasPrefix("application/json") == true,
            let value = try? WireJSON.sharedDecoder.decode(Answer.self, from: response.body)
        else { throw .unexpectedResponse(status: response.status) }
        return value
    }

    /// Sends and returns a 2xx answer as it came. A `repeatable` request is sent with an
    /// `Idempotency-Key`, and sent again with the same key (up to `repeats` times, after a
    /// short pause) when its answer is lost: the connection broke or timed out, or a proxy
    /// or the server answered 502, 503 or 504 (without asking for more than `longestPause`).
    /// The server acts once whatever reaches it.
    func raw(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (some Encodable & Sendable)? = Empty?.none,
        headers: [String: String] = [:], token: String? = nil, timeout: TimeInterval = 30, repeatable: Bool = false
    ) async throws(TrifactorError) -> HTTPResponse {
        guard repeatable else {
            let response = try await exchange(
                method, path, query: query, body: body, headers: headers, token: token, timeout: timeout)
            guard (200..<300).contains(response.status) else { throw Self.problem(response) }
            return response
        }
        // One key for every attempt: the server acts on the first that reaches it and answers the others with its answer.
        let fields = headers.merging(["Idempotency-Key": "\"\(UUID().uuidString.lowercased())\""]) { $1 }
        var attempt = 0
        while true {
            do throws(TrifactorError) {
                let response = try await exchange(
                    method, path, query: query, body: body, headers: fields, token: token, timeout: timeout)
                if (200..<300).contains(response.status) { return response }
                // A proxy that lost its upstream (502, 504), or a server that could not reach its database (503).
                guard [502, 503, 504].contains(response.status), attempt < Self.repeats else {
                    throw Self.problem(response)
                }
                // A server that asks for a longer wait (no message provider, the database away) is answered now: the caller decides.
                let wait = response.header("retry-after").flatMap(Self.retryAfter)
                if let wait, wait > Self.longestPause { throw Self.problem(response) }
                try await Self.pause(attempt: attempt, retryAfter: wait)
            } catch let error where Self.isLostAnswer(error.transportFailure) && attempt < Self.repeats {
                try await Self.pause(attempt: attempt, retryAfter: nil)
            }
            attempt += 1
        }
    }

    /// Waits before the next attempt: the server's `Retry-After`, else 0.25 s, then 0.5 s.
    /// Whether no answer arrived for a reason a repeat may mend (timed out, unreachable, cut off), not a refusal or TLS.
    static func isLostAnswer(_ failure: TransportFailure?) -> Bool {
        guard let failure else { return false }
        return [.timedOut, .unreachable, .other].contains(failure.reason)
    }

    private static func pause(attempt: Int, retryAfter: TimeInterval?) async throws(TrifactorError) {
        let seconds = min(retryAfter ?? 0.25 * Double(attempt + 1), longestPause)
        do {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
        } catch {
            throw .transport(TransportFailure(.cancelled, host: "the server"))
        }
    }

    /// Sends and returns the answer whatever its status.
    func exchange(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (some Encodable & Sendable)? = Empty?.none,
        headers: [String: String] = [:], token: String? = nil, timeout: TimeInterval = 30
    ) async throws(TrifactorError) -> HTTPResponse {
        var components = URLComponents(url: server.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url else { throw .invalidArgument("The server URL cannot take the path \(path).") }
        var fields = forwarded.merging(headers) { $1 }
        fields["Accept"] = "application/json"
        fields["User-Agent"] = userAgent
        if let token { fields["Authorization"] = "Bearer \(token)" }
        var data: Data?
        if let body, !(body is Empty) {
            guard let encoded = try? WireJSON.sharedEncoder.encode(body) else {
                throw .invalidArgument("The request could not be encoded.")
            }
            data = encoded
            fields["Content-Type"] = "application/json"
        }
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(method: method, url: url, headers: fields, body: data, timeout: timeout))
        } catch let failure as TransportFailure {
            throw .transport(failure)
        } catch is CancellationError {
            throw .transport(TransportFailure(.cancelled, host: server.host ?? "the server"))
        } catch {
            throw .transport(TransportFailure(.other, host: server.host ?? "the server"))
        }
        return response
    }

    /// `Retry-After` in seconds: delay-seconds, or an HTTP-date counted from the answer's `Date` (RFC 9110 §10.2.3).
    static func retryAfter(_ value: String) -> TimeInterval? {
        if let seconds = TimeInterval(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 { return seconds }
        guard let date = DeviceAuthenticator.httpDate(value) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }

    /// The error of a non-2xx answer.
    static func problem(_ response: HTTPResponse) -> TrifactorError {
        if response.status == 401, response.body.isEmpty {
            // A 401 whose body the transport could not keep (see URLSessionTransport): the credentials were refused.
            return .server(
                ServerProblem(
                    Problem(
                        status: 401, code: "unauthorized", title: "Unauthorized",
                        detail: "The credentials were refused.",
                        requestID: response.header("x-request-id")), retryAfter: nil))
        }
        guard response.header("content-type")?.hasPrefix("application/problem+json") == true,
            let problem = try? WireJSON.sharedDecoder.decode(Problem.self, from: response.body)
        else { return .unexpectedResponse(status: response.status) }
        return .server(ServerProblem(problem, retryAfter: response.header("retry-after").flatMap(retryAfter)))
    }
}
