extension CBOR {
    /// Walks the item heads at the start of `bytes` without allocating and
    /// returns the length of the first item.
    ///
    /// libcbor allocates an array or map as large as its declared count before
    /// it learns the input is too short (a 5-byte input can cost gigabytes);
    /// this pre-check refuses such counts, indefinite lengths and deep
    /// nesting before `cbor_load` runs.
    /// - Throws: `.malformed` when the item is truncated, indefinite, nests
    ///   deeper than `maximumDepth` or uses a reserved head.
    static func scanItem(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> Int {
        var cursor = bytes.startIndex
        var pending = 1  // items still to read at the current level
        var stack: [Int] = []
        while true {
            while pending == 0 {
                guard let outer = stack.popLast() else { return cursor - bytes.startIndex }
                pending = outer
            }
            pending -= 1
            guard cursor < bytes.endIndex else { throw WebAuthnError(.malformed, detail: "CBOR truncated") }
            let initial = bytes[cursor]
            cursor += 1
            let major = initial >> 5, info = initial & 0x1f
            var argument = UInt64(info)
            switch info {
            case 0..<24: break
            case 24...27:
                let width = 1 << Int(info - 24)
                guard bytes.endIndex - cursor >= width else { throw WebAuthnError(.malformed, detail: "CBOR head truncated") }
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
                let children = major == 5 ? argument.multipliedReportingOverflow(by: 2) : (partialValue: argument, overflow: false)
                guard !children.overflow, children.partialValue <= remaining else {
                    throw WebAuthnError(.malformed, detail: "CBOR container larger than its input")
                }
                if children.partialValue > 0 {
                    guard stack.count + 1 < maximumDepth else { throw WebAuthnError(.malformed, detail: "CBOR nested too deeply") }
                    stack.append(pending)
                    pending = Int(children.partialValue)
                }
            case 6:
                guard stack.count + 1 < maximumDepth else { throw WebAuthnError(.malformed, detail: "CBOR nested too deeply") }
                stack.append(pending)
                pending = 1
            default:
                break  // integers and simple values: the head is the whole item
            }
        }
    }
}
