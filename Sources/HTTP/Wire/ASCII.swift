/// Case-insensitive comparison of header names (ASCII tokens), without the
/// allocation `lowercased()` makes: these run several times per request.
enum ASCII {
    /// Whether `a` equals `lowercase` ignoring ASCII case; `lowercase` must be lower-case already.
    static func equalsIgnoringCase<S: StringProtocol>(_ a: S, _ lowercase: String) -> Bool {
        var other = lowercase.utf8.makeIterator()
        for byte in a.utf8 {
            guard let expected = other.next() else { return false }
            let folded = (byte >= 0x41 && byte <= 0x5a) ? byte | 0x20 : byte
            if folded != expected { return false }
        }
        return other.next() == nil
    }

    /// Whether `text` starts with `lowercase` ignoring ASCII case; `lowercase` must be lower-case already.
    static func hasPrefix(_ text: String, ignoringCase lowercase: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        for expected in lowercase.utf8 {
            guard let byte = bytes.next() else { return false }
            let folded = (byte >= 0x41 && byte <= 0x5a) ? byte | 0x20 : byte
            if folded != expected { return false }
        }
        return true
    }

    /// `name` in lower case, returned as is when it already is (the usual case).
    static func lowercased(_ name: String) -> String {
        name.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5a }) ? name.lowercased() : name
    }
}
