import Foundation
import Logging
import Store
import Synchronization

/// Whether the database answers, known without making `/ready` wait for it:
/// a ping on the database's own probe connection every second, whose last
/// success `/ready` reads from memory on the HTTP thread. So `/ready` answers
/// at once even while every pooled connection waits on a lock, and says
/// "unavailable" once no ping has succeeded for `staleAfter` seconds.
final class ReadinessProbe: Sendable {
    private let database: any Database
    private let logger: Logger
    private let staleAfter: UInt64
    /// Monotonic time (ns) of the last successful ping; 0 after a failure.
    private let lastSuccess = Atomic<UInt64>(0)

    init(database: any Database, logger: Logger, staleAfter: TimeInterval = 3) {
        self.database = database
        self.logger = logger
        self.staleAfter = UInt64(staleAfter * 1e9)
    }

    /// One ping; records its outcome.
    func check() {
        do {
            try database.ping()
            lastSuccess.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
        } catch {
            if lastSuccess.exchange(0, ordering: .acquiringAndReleasing) != 0 {
                logger.log(.error, "readiness_failed", ["error": .string(String(reflecting: error))])
            }
        }
    }

    /// Whether a ping succeeded recently.
    var isReady: Bool {
        let last = lastSuccess.load(ordering: .acquiring)
        return last != 0 && DispatchTime.now().uptimeNanoseconds - last < staleAfter
    }
}
