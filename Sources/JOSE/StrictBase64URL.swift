import Core

/// Base64url as JWS compact serialization wants it (RFC 7515 §2 and
/// Appendix C): the URL-safe alphabet, no padding, no whitespace, and only
/// the canonical encoding of the bytes. `Core.Base64URL` is lenient (it
/// takes padding) because WebAuthn clients send it; a token is not.
package enum StrictBase64URL {
    /// The bytes of `text`, or nil when it is anything but canonical
    /// unpadded base64url (an empty text is the empty byte string).
    package static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        let utf8 = text.utf8
        // A length of 4k+1 leaves 6 bits, which encode no byte.
        guard utf8.count % 4 != 1 else { return nil }
        let alphabet = utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
        guard alphabet, let bytes = Base64URL.decode(String(text)) else { return nil }
        // Non-zero spare bits in the last character would let two texts carry
        // one signature; only the encoding we would write is taken.
        return Base64URL.encode(bytes).utf8.elementsEqual(utf8) ? bytes : nil
    }

    /// Unpadded base64url of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
}
