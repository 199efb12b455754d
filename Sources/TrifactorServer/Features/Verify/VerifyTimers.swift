import Foundation
import Synchronization

/// The durable timer of phone verifications: deadlines live in the
/// database (`next_deadline`), and this thread applies those that are due,
/// so a restart loses none. Each request also applies its own due timeouts
/// whenever it is touched, so the poll interval only bounds how late a next
/// step's message can be.
final class VerifyTimers: Sendable {
    private let env: Environment
    private let stopping = Atomic<Bool>(false)

    init(env: Environment) { self.env = env }

    func start(interval: TimeInterval = 1) {
        let thread = Thread { [self] in
            let service = VerifyService(env: env)
            while !stopping.load(ordering: .acquiring) {
                do {
                    try service.runDue()
                } catch {
                    env.logger.log("error", "verify_timers_failed", ["error": .string(String(reflecting: error))])
                }
                Thread.sleep(forTimeInterval: interval)
            }
        }
        thread.name = "trifactor-verify-timers"
        thread.start()
    }

    func stop() { stopping.store(true, ordering: .releasing) }
}
