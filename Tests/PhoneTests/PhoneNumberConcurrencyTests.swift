import Foundation
import Phone
import Synchronization
import Testing

@Suite("Parsing from many threads")
struct PhoneNumberConcurrencyTests {
    /// Inputs covering success and every failure path of the C++ shim.
    private static let inputs: [(String, String?)] = [
        ("+14155550100", nil), ("(415) 555-0100", "US"), ("447400123456", nil),
        ("+441212345678", nil), ("030 123456", "DE"), ("+18002345678", nil),
        ("+999 1234", nil), ("+44 1", nil), ("+1 4155550100 99999999", nil), ("+1 011 555 0100", nil),
    ]

    /// What parsing every input gives, as comparable values.
    private static func outcomes() -> [Result<PhoneNumber, PhoneNumberError>] {
        inputs.map { text, region in
            Result { () throws(PhoneNumberError) in try PhoneNumber(parsing: text, region: region) }
        }
    }

    @Test("eight threads parsing at once all get the same answers as one thread")
    func eightThreads() {
        let expected = Self.outcomes()
        let threadCount = 8
        let rounds = 200
        let mismatches = Mutex(0)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<threadCount {
            let thread = Thread {
                start.wait()
                var local = 0
                for _ in 0..<rounds where Self.outcomes() != expected {
                    local += 1
                }
                mismatches.withLock { $0 += local }
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<threadCount { start.signal() }
        for _ in 0..<threadCount { done.wait() }
        #expect(mismatches.withLock { $0 } == 0)
    }
}
