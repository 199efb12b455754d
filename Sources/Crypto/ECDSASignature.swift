internal import COpenSSL

/// P-256 ECDSA signatures between their two encodings: DER (an
/// `ECDSA-Sig-Value` SEQUENCE, what OpenSSL, WebAuthn and X.509 use) and raw
/// R || S of 32 bytes each (what JOSE uses, RFC 7518 §3.4). OpenSSL's
/// `ECDSA_SIG` does the DER, so no DER is written by hand here.
package enum ECDSASignature {
    /// The size of one P-256 integer, and half a raw signature.
    package static let p256IntegerSize = 32

    /// The raw R || S (64 bytes) of a DER signature; nil when `der` is not
    /// exactly one DER signature or R or S does not fit 32 bytes.
    package static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        guard !der.isEmpty, der.count <= 72 else { return nil }
        OpenSSLError.clear()
        var consumed = 0
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count)
            if let cursor, let start = buffer.baseAddress { consumed = cursor - start }
            return signature
        }
        guard let parsed else {
            OpenSSLError.clear()
            return nil
        }
        defer { ECDSA_SIG_free(parsed) }
        guard consumed == der.count, let r = ECDSA_SIG_get0_r(parsed), let s = ECDSA_SIG_get0_s(parsed) else {
            return nil
        }
        let size = Int32(p256IntegerSize)
        var out = [UInt8](repeating: 0, count: 2 * p256IntegerSize)
        // BN_bn2binpad answers -1 for a number longer than the width.
        let written = out.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, size), BN_bn2binpad(s, buffer.baseAddress! + p256IntegerSize, size))
        }
        return written == (size, size) ? out : nil
    }

    /// The DER encoding of a raw R || S signature; nil unless `raw` is
    /// exactly 64 bytes (a JOSE ES256 signature has no other length).
    package static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * p256IntegerSize else { return nil }
        OpenSSLError.clear()
        guard let signature = ECDSA_SIG_new() else {
            OpenSSLError.clear()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, Int32(p256IntegerSize), nil)
        let s = raw.withUnsafeBufferPointer {
            BN_bin2bn($0.baseAddress! + p256IntegerSize, Int32(p256IntegerSize), nil)
        }
        // ECDSA_SIG_set0 takes both numbers on success and neither on failure.
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            OpenSSLError.clear()
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else {
            OpenSSLError.clear()
            return nil
        }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? out : nil
    }
}
