import API
public import Foundation

/// A client of the phone-verification API (Vonage Verify v2 compatible),
/// for a server that holds an API key. Each request is named by its id, so
/// several run at once and a new client value (after a restart) resumes
/// one by id. Never ships in an app: the key is a server secret.
public struct PhoneVerificationClient: Sendable {
    /// How a code reaches the phone.
    public enum Channel: String, Sendable, CaseIterable { case sms, voice }

    /// The outcome of a check.
    public enum CheckResult: Sendable, Equatable {
        /// The code was right: the number is verified.
        case verified
        /// The code was wrong; `attemptsLeft` more may be tried (nil when the server did not say).
        case wrongCode(attemptsLeft: Int?)
        /// The code was wrong too many times, or the request ended: start again.
        case ended
    }

    let connection: Connection
    let authorization: String

    /// - Parameters:
    ///   - server: the server's base URL.
    ///   - apiKey: the key from `trifactord keys create`.
    ///   - apiSecret: its secret (kept by the caller in its own secret store).
    ///   - transport: how requests reach the server (`URLSessionTransport` unless a test says otherwise).
    public init(server: URL, apiKey: String, apiSecret: String, transport: any HTTPTransport = URLSessionTransport()) {
        connection = Connection(server: server, transport: transport, userAgent: "TrifactorKit/1")
        authorization = "Basic " + Data("\(apiKey):\(apiSecret)".utf8).base64EncodedString()
    }

    /// Starts a verification of `number` (E.164 digits, `+` optional): a code by the first channel, then the next when it times out.
    /// - Returns: the request id.
    /// - Throws: `TrifactorError.server` 409 for a number with a running request (its id in `requestID`), 422 naming bad fields, 429.
    public func start(
        to number: String, channels: [Channel] = [.sms, .voice], brand: String, codeLength: Int? = nil,
        locale: String? = nil
    ) async throws(TrifactorError) -> String {
        let digits = number.hasPrefix("+") ? String(number.dropFirst()) : number
        guard !channels.isEmpty else { throw .invalidArgument("Name at least one channel.") }
        let request = StartVerificationRequest(
            brand: brand, workflow: channels.map { .init(channel: $0.rawValue, to: digits) },
            locale: locale, codeLength: codeLength)
        let started: VerificationStarted = try await connection.call(
            "POST", "/v2/verify", body: request, headers: ["Authorization": authorization],
            repeatable: true)
        return started.requestID
    }

    /// Checks `code` for request `id`.
    /// - Throws: transport failures and other refusals (401, 429); a wrong or spent code is a result, not an error.
    public func check(_ id: String, code: String) async throws(TrifactorError) -> CheckResult {
        do {
            _ = try await connection.raw(
                "POST", "/v2/verify/\(TrifactorClient.segment(id))", body: CheckCodeRequest(code: code),
                headers: ["Authorization": authorization])
            return .verified
        } catch let error where error.problem?.status == 400 {
            return .wrongCode(attemptsLeft: error.problem?.remainingAttempts)
        } catch let error where error.problem?.status == 410 || error.problem?.status == 404 {
            return .ended
        }
    }

    /// Sends the next channel's code now.
    /// - Throws: `TrifactorError.server` 409 when no channel is left.
    public func next(_ id: String) async throws(TrifactorError) {
        _ = try await connection.raw(
            "POST", "/v2/verify/\(TrifactorClient.segment(id))/next_workflow",
            headers: ["Authorization": authorization],
            repeatable: true)
    }

    /// Cancels request `id`.
    /// - Throws: `TrifactorError.server` 409 in its first 30 seconds or once a later channel fired.
    public func cancel(_ id: String) async throws(TrifactorError) {
        _ = try await connection.raw(
            "DELETE", "/v2/verify/\(TrifactorClient.segment(id))", headers: ["Authorization": authorization])
    }
}
