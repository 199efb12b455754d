internal import COpenSSL
package import Foundation

/// What the deployment doctor reads from a TLS certificate (PEM): when it expires, whether the private key
/// belongs to it, and whether it names a host.
package struct CertificateCheck: Sendable {
    /// The end of the first certificate's validity (`notAfter`).
    package let expires: Date
    /// Whether the key matches the certificate's public key (nil: no key given; false also when it does not parse).
    package let keyMatches: Bool?
    /// Whether the certificate covers the host (a DNS name or an IP address; nil: no host given).
    package let coversHost: Bool?

    /// Reads the first certificate of `pem`; nil when there is none.
    package init?(pem: String, keyPEM: String? = nil, host: String? = nil) {
        OpenSSLError.clear()
        defer { OpenSSLError.clear() }
        guard let bio = MemoryBIO.holding(pem) else { return nil }
        defer { BIO_free(bio) }
        guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return nil }
        defer { X509_free(certificate) }
        var days: Int32 = 0
        var seconds: Int32 = 0
        // The difference from now (nil) to notAfter: negative once expired.
        guard let notAfter = X509_get0_notAfter(certificate), ASN1_TIME_diff(&days, &seconds, nil, notAfter) == 1
        else { return nil }
        expires = Date().addingTimeInterval(Double(days) * 86_400 + Double(seconds))
        if let keyPEM {
            let keyBIO = MemoryBIO.holding(keyPEM)
            defer { if let keyBIO { BIO_free(keyBIO) } }
            if let keyBIO, let key = PEM_read_bio_PrivateKey(keyBIO, nil, nil, nil) {
                defer { EVP_PKEY_free(key) }
                keyMatches = X509_check_private_key(certificate, key) == 1
            } else {
                keyMatches = false
            }
        } else {
            keyMatches = nil
        }
        if let host {
            let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
            coversHost =
                isAddress
                ? X509_check_ip_asc(certificate, host, 0) == 1
                : X509_check_host(certificate, host, host.utf8.count, 0, nil) == 1
        } else {
            coversHost = nil
        }
    }
}

/// A memory BIO holding its own copy of a text (`BIO_write` copies), so no Swift buffer has to outlive the call
/// that lent it (`BIO_new_mem_buf` would keep pointing into the array).
enum MemoryBIO {
    static func holding(_ text: String) -> OpaquePointer? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(bytes.count) || bytes.isEmpty else {
            BIO_free(bio)
            return nil
        }
        return bio
    }
}
