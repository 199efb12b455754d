import Crypto
import Foundation
import Synchronization

/// The keys that seal secrets at rest (TOTP seeds), by id: the active key
/// seals, every key opens. A sealed value names its key:
/// `0xFF 'T' 'K' len id ‖ nonce ‖ ciphertext ‖ tag`; a value without that
/// envelope was sealed before key rings, by the key `k0`. A value naming a
/// key this ring lacks makes it read its file again (another instance or
/// `trifactord keys rotate` may have added it) before giving up.
package final class KeyRing: Sendable {
    private struct State {
        var entries: [KeyFile.Entry]
        var boxes: [String: SealedBox]
        var modified: Date?
    }

    /// The file it was read from (nil: held in memory only, for tests).
    let path: String?
    private let state: Mutex<State>

    private static let magic: [UInt8] = [0xFF, 0x54, 0x4B]

    /// The ring in the key file at `path`.
    init(path: String) throws {
        self.path = path
        state = Mutex(try Self.state(path))
    }

    /// A ring of the given keys, the last active (tests and tools).
    package init(entries: [KeyFile.Entry]) throws {
        path = nil
        var boxes: [String: SealedBox] = [:]
        for e in entries { boxes[e.id] = try SealedBox(key: e.key) }
        state = Mutex(State(entries: entries, boxes: boxes, modified: nil))
    }

    private static func state(_ path: String) throws -> State {
        // The time first: a rotation landing between the two then looks like a change still to read.
        let modified = modification(of: path)
        let entries = try KeyFile.read(path)
        var boxes: [String: SealedBox] = [:]
        for e in entries { boxes[e.id] = try SealedBox(key: e.key) }
        return State(entries: entries, boxes: boxes, modified: modified)
    }

    private static func modification(of path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// The key that seals now.
    var activeID: String { state.withLock { $0.entries.last!.id } }
    /// Every key, oldest first.
    var entries: [KeyFile.Entry] { state.withLock { $0.entries } }

    /// Reads the file again when it changed (or at once, `force`); true when the ring changed.
    @discardableResult
    func reload(force: Bool = false) throws -> Bool {
        guard let path else { return false }
        if !force, let modified = Self.modification(of: path), modified == state.withLock({ $0.modified }) {
            return false
        }
        let fresh = try Self.state(path)
        return state.withLock { current in
            let changed = current.entries != fresh.entries
            current = fresh
            return changed
        }
    }

    /// Seals `plaintext` under the active key, naming it.
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let (id, box) = state.withLock { s in (s.entries.last!.id, s.boxes[s.entries.last!.id]!) }
        return Self.magic + [UInt8(id.utf8.count)] + Array(id.utf8)
            + (try box.seal(plaintext, associatedData: associatedData))
    }

    /// The key id a sealed value names (`k0` for a value from before key rings).
    static func keyID(of sealed: [UInt8]) -> (id: String, body: ArraySlice<UInt8>) {
        if sealed.count > 4, Array(sealed.prefix(3)) == magic {
            let length = Int(sealed[3])
            if length >= 1, sealed.count > 4 + length,
                let id = String(bytes: sealed[4..<(4 + length)], encoding: .utf8), KeyFile.isKeyID(Substring(id))
            {
                return (id, sealed[(4 + length)...])
            }
        }
        return ("k0", sealed[...])
    }

    /// Opens what `seal` made under any key of the ring.
    /// - Throws: `SealedBox.Failure.authenticationFailed` when the value was
    ///   altered, belongs to another row, or names a key the ring lacks.
    func open(_ sealed: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let (id, body) = Self.keyID(of: sealed)
        var box = state.withLock { $0.boxes[id] }
        if box == nil, path != nil {
            try reload(force: true)
            box = state.withLock { $0.boxes[id] }
        }
        guard let box else { throw SealedBox.Failure.authenticationFailed }
        return try box.open(Array(body), associatedData: associatedData)
    }
}
