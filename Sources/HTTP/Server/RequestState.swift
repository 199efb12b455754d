import Foundation
import Synchronization

/// One request's state between libmicrohttpd's calls: made when the request
/// line is read, then the head's checks, the body as it arrives, and the
/// response once it is ready. Kept alive by a retained pointer in `*con_cls`
/// and released in the completed callback.
final class RequestState: Sendable {
    struct Mutable {
        /// Set at the first call of the access handler, when the head is complete.
        var method = ""
        var path = ""
        /// The target's query string as sent, without the `?`.
        var rawQuery = ""
        var headSeen = false
        /// Already answered by the guard (the connection is being shut down).
        var refused = false
        /// The answer the head gets, decided when the request line was read.
        var problem: HTTPProblem?
        /// The header fields, checked, in the order received.
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        /// Bytes read past the body limit and thrown away.
        var discarded = 0
        var dispatched = false
        var response: Response?
        var status = 0
        /// Where the answer is counted (nil: refused before routing).
        var routeStats: RouteStats?
    }

    let id: String
    let started: ContinuousClock.Instant
    /// Where the raw request target ended in libmicrohttpd's read buffer (an
    /// address, compared, never read): the version string follows it at
    /// once unless the target held a NUL byte.
    let rawTargetEnd: UInt
    /// Written by the HTTP thread while reading, by a worker when it answers.
    let state = Mutex(Mutable())

    init(id: String, rawTargetEnd: UInt) {
        self.id = id
        self.rawTargetEnd = rawTargetEnd
        started = .now
    }
}
