extension CBOR {
    /// Walks the item heads at the start of `bytes` without allocating and
    /// returns the length of the first item.
    ///
    /// libcbor allocates an array or map as large as its declared count before
    /// it learns the input is too short (a 5-byte input can cost gigabytes),
    /// and asserts (aborting the process) when a float reaches its
    /// simple-value accessors. This pre-check refuses, before `cbor_load`
    /// runs: such counts, containers larger than WebAuthn needs, inputs of
    /// too many items, indefinite lengths, deep nesting, floats and every
    /// simple value but `false`, `true` and `null`.
    /// - Throws: `.malformed` when the item breaks any of these rules or is
    ///   truncated.
    static func scanItem(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> Int {
        var cursor = bytes.startIndex
        var pending = 1  // items still to read at the current level
        var stack: [Int] = []
        var items = 0
        while true {
            while pending == 0 {
                guard let outer = stack.popLast() else { return cursor - bytes.startIndex }
                pending = outer
            }
            pending -= 1
            items += 1
            guard items <= maximumItemCount else {
                throw WebAuthnError(.malformed, detail: "CBOR holds too many items")
            }
            guard cursor < bytes.endIndex else { throw WebAuthnError(.malformed, detail: "CBOR truncated") }
            let initial = bytes[cursor]
            cursor += 1
            let major = initial >> 5
            let info = initial & 0x1f
            var argument = UInt64(info)
            switch info {
            case 0..<24: break
            case 24...27:
                let width = 1 << Int(info - 24)
                guard bytes.endIndex - cursor >= width else {
                    throw WebAuthnError(.malformed, detail: "CBOR head truncated")
                }
                argument = bytes[cursor..<cursor + width].reduce(0) { $0 << 8 | UInt64($1) }
                cursor += width
            default:
                throw WebAuthnError(.malformed, detail: "indefinite or reserved CBOR head")
            }
            let remaining = UInt64(bytes.endIndex - cursor)
            switch major {
            case 2, 3:
                guard argument <= remaining else { throw WebAuthnError(.malformed, detail: "CBOR string truncated") }
                cursor += Int(argument)
            case 4, 5:
                guard argument <= UInt64(maximumContainerCount) else {
                    throw WebAuthnError(.malformed, detail: "CBOR container of \(argument) elements")
                }
                let children = major == 5 ? argument * 2 : argument
                guard children <= remaining else {
                    throw WebAuthnError(.malformed, detail: "CBOR container larger than its input")
                }
                if children > 0 {
                    guard stack.count + 1 < maximumDepth else {
                        throw WebAuthnError(.malformed, detail: "CBOR nested too deeply")
                    }
                    stack.append(pending)
                    pending = Int(children)
                }
            case 6:
                guard stack.count + 1 < maximumDepth else {
                    throw WebAuthnError(.malformed, detail: "CBOR nested too deeply")
                }
                stack.append(pending)
                pending = 1
            case 7:
                // false (20), true (21) and null (22) only: no floats, undefined or other simple values.
                guard (20...22).contains(info) else {
                    throw WebAuthnError(.malformed, detail: "CBOR float or simple value \(info)")
                }
            default:
                break  // integers: the head is the whole item
            }
        }
    }
}
