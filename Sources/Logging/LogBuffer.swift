import Foundation
import Glibc
import Synchronization

/// Lines for standard error, written in batches: appended under a lock, and
/// written (whole lines only, so lines from several threads never
/// interleave) by a thread of their own every 20 ms, or at once when 64 KiB
/// are waiting. One `write(2)` per request cost a tenth of a session check.
/// `flush()` writes what waits (the server calls it when it stops); a crash
/// loses at most the last 20 ms of lines.
final class LogBuffer: Sendable {
    static let standardError = LogBuffer(descriptor: 2)

    private let descriptor: Int32
    private let pending = Mutex<[UInt8]>([])
    private let wake = DispatchSemaphore(value: 0)

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        let thread = Thread { [self] in
            while true {
                _ = wake.wait(timeout: .now() + .milliseconds(20))
                flush()
            }
        }
        thread.name = "trifactor-log"
        thread.start()
    }

    func append(_ line: String) {
        let full = pending.withLock { buffer -> Bool in
            buffer.append(contentsOf: line.utf8)
            buffer.append(0x0a)
            return buffer.count >= 64 * 1024
        }
        if full { wake.signal() }
    }

    /// Writes every waiting line now.
    func flush() {
        let bytes = pending.withLock { buffer -> [UInt8] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { if errno == EINTR { continue } else { return } }
            offset += written
        }
    }
}
