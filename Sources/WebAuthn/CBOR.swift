internal import CCBOR

/// A decoded CBOR data item: the subset WebAuthn needs, in pure Swift.
/// Decoded from libcbor by `CBOR.decode(_:)`; the rest of the module never
/// touches C.
///
/// Only what WebAuthn uses gets through: integers, byte and text strings,
/// arrays, maps, tags, `true`, `false` and `null`. Floats, `undefined` and
/// other simple values are refused by the pre-scan (`scanItem`), before
/// libcbor sees them: libcbor asserts on a float passed to its simple-value
/// accessors, which would abort the process.
package enum CBOR: Hashable, Sendable {
    /// A key/value pair of a map, in the order they were encoded.
    package struct Entry: Hashable, Sendable {
        let key: CBOR
        let value: CBOR
    }

    case unsigned(UInt64)
    /// A negative integer stored as CBOR does: the value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([Entry])
    indirect case tagged(UInt64, CBOR)
    case bool(Bool)
    case null

    /// Deepest nesting accepted (WebAuthn structures need 4).
    static let maximumDepth = 16
    /// Most elements of one array or entries of one map (a COSE key has at
    /// most 6, an attestation object 3, a `packed` statement with its
    /// certificate chain a handful).
    static let maximumContainerCount = 64
    /// Most data items in one decoded input, nested ones included.
    static let maximumItemCount = 1024

    /// The value as a signed integer when it is one that fits in `Int`.
    var int: Int? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: nil
        }
    }

    /// The value of the entry whose key is the integer `key`.
    subscript(int key: Int) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key.int == key }?.value
    }

    /// The value of the entry whose key is the text `key`.
    subscript(text key: String) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// Decodes the first CBOR item in `bytes`.
    /// - Returns: the item and how many bytes it took (trailing bytes are the caller's business).
    /// - Throws: `.malformed` when the bytes do not start with a well-formed,
    ///   definite-length item, nest too deep, or a map repeats a key.
    package static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WebAuthnError) -> (item: CBOR, length: Int) {
        guard !bytes.isEmpty else { throw WebAuthnError(.malformed, detail: "empty CBOR") }
        let itemLength = try scanItem(bytes)
        var result = cbor_load_result()
        let loaded: UnsafeMutablePointer<cbor_item_t>? = bytes.withUnsafeBufferPointer { buffer in
            cbor_load(buffer.baseAddress, itemLength, &result)
        }
        guard let root = loaded else {
            throw WebAuthnError(
                .malformed,
                detail: "cbor_load failed with code \(result.error.code.rawValue) at \(result.error.position)")
        }
        defer {
            var handle: UnsafeMutablePointer<cbor_item_t>? = root
            cbor_decref(&handle)
        }
        guard result.error.code == CBOR_ERR_NONE, result.read == itemLength else {
            throw WebAuthnError(.malformed, detail: "cbor_load reported an error")
        }
        return (try convert(root, depth: 0), result.read)
    }

    /// Decodes `bytes`, which must hold exactly one CBOR item.
    package static func decode(_ bytes: [UInt8]) throws(WebAuthnError) -> CBOR {
        let (item, length) = try decodePrefix(bytes[...])
        guard length == bytes.count else { throw WebAuthnError(.malformed, detail: "trailing bytes after CBOR item") }
        return item
    }

    private static func convert(_ item: UnsafeMutablePointer<cbor_item_t>, depth: Int) throws(WebAuthnError) -> CBOR {
        guard depth < maximumDepth else { throw WebAuthnError(.malformed, detail: "CBOR nested too deeply") }
        if cbor_isa_uint(item) { return .unsigned(cbor_get_int(item)) }
        if cbor_isa_negint(item) { return .negative(cbor_get_int(item)) }
        if cbor_isa_bytestring(item) {
            guard cbor_bytestring_is_definite(item) else {
                throw WebAuthnError(.malformed, detail: "indefinite byte string")
            }
            let length = cbor_bytestring_length(item)
            guard length > 0, let handle = cbor_bytestring_handle(item) else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: handle, count: length)))
        }
        if cbor_isa_string(item) {
            guard cbor_string_is_definite(item) else {
                throw WebAuthnError(.malformed, detail: "indefinite text string")
            }
            let length = cbor_string_length(item)
            guard length > 0, let handle = cbor_string_handle(item) else { return .text("") }
            guard let text = String(validating: UnsafeBufferPointer(start: handle, count: length), as: UTF8.self) else {
                throw WebAuthnError(.malformed, detail: "text string is not UTF-8")
            }
            return .text(text)
        }
        if cbor_isa_array(item) {
            guard cbor_array_is_definite(item) else { throw WebAuthnError(.malformed, detail: "indefinite array") }
            let count = cbor_array_size(item)
            guard count > 0, let handle = cbor_array_handle(item) else { return .array([]) }
            var elements: [CBOR] = []
            elements.reserveCapacity(count)
            for index in 0..<count {
                guard let element = handle[index] else {
                    throw WebAuthnError(.malformed, detail: "missing array element")
                }
                elements.append(try convert(element, depth: depth + 1))
            }
            return .array(elements)
        }
        if cbor_isa_map(item) {
            guard cbor_map_is_definite(item) else { throw WebAuthnError(.malformed, detail: "indefinite map") }
            let count = cbor_map_size(item)
            guard count > 0, let handle = cbor_map_handle(item) else { return .map([]) }
            var entries: [Entry] = []
            var keys = Set<CBOR>(minimumCapacity: count)
            entries.reserveCapacity(count)
            for index in 0..<count {
                guard let key = handle[index].key, let value = handle[index].value else {
                    throw WebAuthnError(.malformed, detail: "missing map entry")
                }
                let entry = Entry(key: try convert(key, depth: depth + 1), value: try convert(value, depth: depth + 1))
                guard keys.insert(entry.key).inserted else {
                    throw WebAuthnError(.malformed, detail: "duplicate map key")
                }
                entries.append(entry)
            }
            return .map(entries)
        }
        if cbor_isa_tag(item) {
            guard let tagged = cbor_tag_item(item) else { throw WebAuthnError(.malformed, detail: "empty tag") }
            defer {
                var handle: UnsafeMutablePointer<cbor_item_t>? = tagged
                cbor_decref(&handle)
            }
            return .tagged(cbor_tag_value(item), try convert(tagged, depth: depth + 1))
        }
        if cbor_isa_float_ctrl(item) {
            // The pre-scan lets only the one-byte simple values through; checked
            // again here because libcbor's accessors assert on floats.
            guard cbor_float_get_width(item) == CBOR_FLOAT_0 else {
                throw WebAuthnError(.malformed, detail: "CBOR float")
            }
            switch Int(cbor_ctrl_value(item)) {
            case Int(CBOR_CTRL_FALSE.rawValue): return .bool(false)
            case Int(CBOR_CTRL_TRUE.rawValue): return .bool(true)
            case Int(CBOR_CTRL_NULL.rawValue): return .null
            default: throw WebAuthnError(.malformed, detail: "CBOR simple value other than true, false and null")
            }
        }
        throw WebAuthnError(.malformed, detail: "unknown CBOR item")
    }
}
