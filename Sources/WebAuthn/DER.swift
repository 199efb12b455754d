/// Just enough DER to wrap raw key material in a SubjectPublicKeyInfo.
enum DER {
    /// Fixed SPKI prefix of an uncompressed P-256 point (id-ecPublicKey, prime256v1, BIT STRING of 66 bytes).
    static let p256Prefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]
    /// Fixed SPKI prefix of an Ed25519 key (id-Ed25519, BIT STRING of 33 bytes).
    static let ed25519Prefix: [UInt8] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]
    /// AlgorithmIdentifier { rsaEncryption, NULL }.
    static let rsaAlgorithm: [UInt8] = [0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00]

    /// A tag-length-value with a definite DER length.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        let count = content.count
        if count < 0x80 {
            out.append(UInt8(count))
        } else {
            var length: [UInt8] = []
            var rest = count
            while rest > 0 { length.insert(UInt8(rest & 0xff), at: 0); rest >>= 8 }
            out.append(0x80 | UInt8(length.count))
            out += length
        }
        return out + content
    }

    /// A non-negative INTEGER from big-endian magnitude bytes: leading zeros
    /// dropped, one 0x00 added when the top bit is set.
    static func unsignedInteger(_ magnitude: [UInt8]) -> [UInt8] {
        var bytes = Array(magnitude.drop { $0 == 0 })
        if bytes.isEmpty { bytes = [0] }
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    /// SubjectPublicKeyInfo of an RSA key { rsaEncryption, RSAPublicKey { n, e } }.
    static func rsaSubjectPublicKeyInfo(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        let rsaPublicKey = tlv(0x30, unsignedInteger(modulus) + unsignedInteger(exponent))
        return tlv(0x30, rsaAlgorithm + tlv(0x03, [0x00] + rsaPublicKey))
    }
}
