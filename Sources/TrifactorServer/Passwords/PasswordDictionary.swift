internal import CCrack
import Foundation

/// Debian's cracklib dictionary, looked up through libcrack2: the words and
/// passwords of `/usr/share/dict/cracklib-small` (54,763 entries: English
/// words, names, keyboard runs and common passwords such as `qwerty123`)
/// and the system's other word lists (`update-cracklib` packs every list in
/// `/usr/share/dict`: 97,638 words with `wamerican`), packed by
/// `cracklib-runtime` into `/var/cache/cracklib/cracklib_dict`. Instances
/// should share one set of word lists; restart trifactord after
/// `update-cracklib` rewrites the files it holds open.
///
/// Only the dictionary is consulted, through cracklib's own mangling rules
/// for taking a password apart (dropping leading and trailing characters,
/// purging punctuation, undoing letter-for-digit swaps, reversal): a password
/// that is a dictionary entry in disguise is refused. cracklib's composition
/// rules (enough different characters, no runs, minimum length) are not
/// applied: NIST SP 800-63B §5.1.1.2 advises against composition rules.
///
/// `@unchecked Sendable`: libcrack2 keeps its state in static storage (the
/// handle `PWOpen` returns is one static struct, the block cache and
/// `Mangle`'s result are static buffers), so a process opens one dictionary,
/// once (`open(path:)`), never closes it, and every call holds `lock`.
package final class PasswordDictionary: @unchecked Sendable {
    private static let lock = NSLock()
    /// The process's one dictionary, once opened; guarded by `lock`.
    nonisolated(unsafe) private static var opened: PasswordDictionary?
    private let dictionary: UnsafeMutablePointer<PWDICT>
    private let notFound: UInt32
    private let rules: [UnsafeMutablePointer<CChar>]
    /// Where it was read from.
    let path: String

    /// cracklib's compiled-in dictionary (`/var/cache/cracklib/cracklib_dict`).
    package static var defaultPath: String { String(cString: GetDefaultCracklibDict()) }

    /// cracklib's `r_destructors` (lib/fascist.c), in its rule language: the
    /// password as it is, with one or two characters dropped at either end,
    /// with punctuation or symbols purged, and with every combination of the
    /// digit-for-letter swaps undone (`$`→s, 0→o, 2→a, 3→e, 5→s, 1→i or l,
    /// 4→a or h; `/0s0o` reads "if it holds a 0, put o for each 0"), as
    /// cracklib lists them, generated here rather than copied.
    static let destructors: [String] = {
        var rules = [":", "[", "]", "[[", "]]", "[[[", "]]]", "/?p@?p", "/?s@?s"]
        let swaps = ["/$s$s", "/0s0o", "/2s2a", "/3s3e", "/5s5s"]
        for mask in 0..<(1 << swaps.count) {
            let chosen = swaps.indices.filter { mask & (1 << $0) != 0 }.map { swaps[$0] }.joined()
            for one in ["", "/1s1i", "/1s1l"] {
                for four in ["", "/4s4a", "/4s4h"] where !(chosen + one + four).isEmpty {
                    rules.append(chosen + one + four)
                }
            }
        }
        return rules
    }()

    /// The packed dictionary at `path` (without its `.pwd`/`.pwi`/`.hwm`
    /// suffix), opened and checked the first time; the same one afterwards.
    /// - Throws: `ResourceFailure` when it is missing, unreadable, does not
    ///   know `qwerty123`, or another dictionary is open in this process.
    static func open(path: String = PasswordDictionary.defaultPath) throws(ResourceFailure) -> PasswordDictionary {
        lock.lock()
        defer { lock.unlock() }
        if let opened {
            guard opened.path == path else {
                throw ResourceFailure(
                    description:
                        "The password dictionary \(opened.path) is open already; libcrack2 holds one dictionary per process, not \(path) too."
                )
            }
            return opened
        }
        let dictionary = try PasswordDictionary(path: path)
        opened = dictionary
        return dictionary
    }

    /// Called with `lock` held.
    private init(path: String) throws(ResourceFailure) {
        self.path = path
        var mode = Array("r".utf8CString)
        guard FileManager.default.isReadableFile(atPath: path + ".pwd"),
            let opened = mode.withUnsafeMutableBufferPointer({ mode in
                path.withCString { PWOpen($0, mode.baseAddress) }
            })
        else {
            throw ResourceFailure(
                description:
                    "The password dictionary \(path) cannot be read: install Debian's cracklib-runtime (it builds the dictionary), "
                    + "or point TRIFACTOR_PASSWORD_DICTIONARY at one.")
        }
        dictionary = opened
        // FindPW answers the dictionary's word count for a word it lacks; no word is empty.
        notFound = "".withCString { FindPW(opened, UnsafeMutablePointer(mutating: $0)) }
        rules = Self.destructors.map { strdup($0)! }
        guard found("qwerty123"), found("passw0rd"), !found("correct horse battery staple") else {
            // Closed, so that a corrected path can be opened in this process (libcrack2 holds one).
            PWClose(opened)
            for rule in rules { free(rule) }
            throw ResourceFailure(
                description:
                    "The password dictionary \(path) does not answer as cracklib's should (qwerty123 is not in it): rebuild it with update-cracklib."
            )
        }
    }

    /// Whether `password` (already NFKC-normalised) is a dictionary entry, as it is, reversed, or taken apart by the rules.
    func contains(_ password: String) -> Bool {
        // cracklib compares lower case, trimmed, and at most 255 bytes (cut at a character, never inside one).
        var lowered = password.lowercased().trimmingCharacters(in: .whitespaces)
        while lowered.utf8.count > 255 { lowered.removeLast() }
        guard !lowered.isEmpty else { return false }
        return Self.lock.withLock { found(lowered) || found(String(lowered.reversed())) }
    }

    /// Called with `lock` held. The rules' results are gathered first and
    /// each distinct one looked up once: most swaps change nothing, so a
    /// password costs about ten lookups, not six hundred.
    private func found(_ word: String) -> Bool {
        var input = Array(word.utf8CString)
        let length = strlen(input)
        var candidates: Set<String> = []
        input.withUnsafeMutableBufferPointer { buffer in
            for rule in rules {
                guard let mangled = Mangle(buffer.baseAddress, rule) else { continue }
                // As cracklib's FascistLookUser: a rule that purged three characters or more proves nothing
                // (so dropping three at an end never counts: "]]]" is in its list, and as dead there).
                guard length - strlen(mangled) < 3 else { continue }
                candidates.insert(String(cString: mangled))
            }
        }
        return candidates.contains { candidate in
            var bytes = Array(candidate.utf8CString)
            return bytes.withUnsafeMutableBufferPointer { FindPW(dictionary, $0.baseAddress) } != notFound
        }
    }
}
