internal import COpenSSL

/// An OpenSSL call that failed: which one, and the library's error code (the
/// first on the thread's error queue, `ERR_get_error`), for logs. Every call
/// site clears the queue before it calls, and empties it after a failure.
package struct OpenSSLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The OpenSSL function that failed.
    package let operation: String
    /// `ERR_get_error()` right after the failure (0 when the queue was empty).
    package let code: UInt

    package var description: String { "\(operation) failed (OpenSSL error \(String(code, radix: 16)))" }

    /// The failure of `operation`, with the queue's first code; the queue is emptied.
    static func last(_ operation: String) -> OpenSSLError {
        let error = OpenSSLError(operation: operation, code: ERR_get_error())
        ERR_clear_error()
        return error
    }

    /// Empties the thread's error queue, so a later failure reports its own code.
    static func clear() { ERR_clear_error() }
}
