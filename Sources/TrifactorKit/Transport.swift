public import Foundation

#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// One HTTP request as the SDK sends it.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, `DELETE`.
    public var method: String
    /// The full URL.
    public var url: URL
    /// Header fields.
    public var headers: [String: String]
    /// The body, if any.
    public var body: Data?
    /// Seconds before the transport gives up.
    public var timeout: TimeInterval

    public init(
        method: String, url: URL, headers: [String: String] = [:], body: Data? = nil, timeout: TimeInterval = 30
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// One HTTP answer.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields, names in lower case.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }

    /// The field `name` (any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// How the SDK reaches the server: the seam for tests and for apps with a
/// networking stack of their own. `URLSessionTransport` is the default.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer, whatever its status.
    /// - Throws: `TransportFailure` when no answer arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// No answer from the server: not a refusal by it. Its description names
/// the reason and the host, never a path, query or header.
public struct TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: String, Sendable {
        /// No connection (refused, no route, DNS).
        case unreachable
        /// No answer in time.
        case timedOut
        /// The task was cancelled.
        case cancelled
        /// The TLS handshake failed.
        case insecure
        /// Anything else.
        case other
    }

    public let reason: Reason
    /// The server's host.
    public let host: String

    public init(_ reason: Reason, host: String) {
        self.reason = reason
        self.host = host
    }

    public var description: String {
        switch reason {
        case .unreachable: "Trifactor at \(host) cannot be reached."
        case .timedOut: "Trifactor at \(host) did not answer in time."
        case .cancelled: "The request to \(host) was cancelled."
        case .insecure: "The secure connection to \(host) failed."
        case .other: "The request to \(host) failed."
        }
    }
}

/// The default transport: Foundation's `URLSession` (FoundationNetworking on
/// Linux, whose `URLSession` has no async `data(for:)`, so the delegate API
/// is wrapped here), with an ephemeral configuration: no cookies, no cache.
///
/// - Important: FoundationNetworking up to Swift 6.3.1 never completes a
///   task whose answer is a 401 with `WWW-Authenticate: Basic` when it has
///   no credential (swift-corelibs-foundation #5456). On Linux this
///   transport declines such challenges itself and returns the 401 with its
///   headers (the body is lost there: `X-Request-ID` still names the request).
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let tasks: TaskTable
    private let ownsSession: Bool

    /// One session for the whole process, shared by every transport made
    /// with the default configuration: FoundationNetworking's sessions are
    /// heavy (a libcurl multi handle each), and creating and invalidating
    /// many of them at once is where it has been seen to stall.
    private static let shared: (URLSession, TaskTable) = {
        let tasks = TaskTable()
        return (URLSession(configuration: cookieless(.ephemeral), delegate: tasks, delegateQueue: nil), tasks)
    }()

    /// The shared session (the default), or a session of its own for a custom `configuration`.
    public init(configuration: URLSessionConfiguration? = nil) {
        if let configuration {
            tasks = TaskTable()
            session = URLSession(configuration: Self.cookieless(configuration), delegate: tasks, delegateQueue: nil)
            ownsSession = true
        } else {
            (session, tasks) = Self.shared
            ownsSession = false
        }
    }

    private static func cookieless(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.httpShouldSetCookies = false
        return configuration
    }

    deinit { if ownsSession { session.finishTasksAndInvalidate() } }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let host = request.url.host ?? "the server"
        let task = session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                tasks.start(task, host: host, continuation: continuation)
            }
        } onCancel: {
            task.cancel()
        }
    }
}

/// The tasks in flight and what they received, as the session's delegate.
/// `@unchecked Sendable`: `entries` is only touched under `lock`.
private final class TaskTable: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Entry {
        let host: String
        let continuation: CheckedContinuation<HTTPResponse, any Error>
        var data = Data()
        var declined: HTTPURLResponse?
    }

    private let lock = NSLock()
    private var entries: [Int: Entry] = [:]

    func start(_ task: URLSessionDataTask, host: String, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        lock.withLock { entries[task.taskIdentifier] = Entry(host: host, continuation: continuation) }
        task.resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { entries[dataTask.taskIdentifier]?.data.append(data) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
            // No credential to offer: keep the 401 and stop the task (see the type's note).
            if let response = challenge.failureResponse as? HTTPURLResponse {
                lock.withLock { entries[task.taskIdentifier]?.declined = response }
                completionHandler(.cancelAuthenticationChallenge, nil)
                return
            }
        #endif
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = lock.withLock({ entries.removeValue(forKey: task.taskIdentifier) }) else { return }
        if let declined = entry.declined {
            entry.continuation.resume(returning: Self.response(declined, body: entry.data))
        } else if let error {
            entry.continuation.resume(throwing: TransportFailure(Self.reason(error), host: entry.host))
        } else if let http = task.response as? HTTPURLResponse {
            entry.continuation.resume(returning: Self.response(http, body: entry.data))
        } else {
            entry.continuation.resume(throwing: TransportFailure(.other, host: entry.host))
        }
    }

    private static func response(_ http: HTTPURLResponse, body: Data) -> HTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: body)
    }

    private static func reason(_ error: any Error) -> TransportFailure.Reason {
        let code = (error as? URLError)?.code
        switch code {
        case .timedOut?: return .timedOut
        case .cancelled?: return .cancelled
        case .cannotConnectToHost?, .cannotFindHost?, .networkConnectionLost?, .notConnectedToInternet?,
            .dnsLookupFailed?:
            return .unreachable
        case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?,
            .serverCertificateNotYetValid?:
            return .insecure
        default: return .other
        }
    }
}
