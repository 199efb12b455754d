import Foundation
import Synchronization

/// One request's state between libmicrohttpd's calls of the access handler:
/// the body as it arrives, then the response once it is ready. Kept alive
/// by a retained pointer in `*con_cls` and released in the completed callback.
final class RequestState: Sendable {
    struct Mutable {
        var body: [UInt8] = []
        /// Bytes read past the body limit and thrown away.
        var discarded = 0
        var dispatched = false
        var response: Response?
        var status = 0
    }

    let id: String
    let started: ContinuousClock.Instant
    let method: String
    let path: String
    /// Written by the HTTP thread while reading, by a worker when it answers.
    let state = Mutex(Mutable())

    init(id: String, method: String, path: String) {
        self.id = id
        self.method = method
        self.path = path
        started = .now
    }
}
