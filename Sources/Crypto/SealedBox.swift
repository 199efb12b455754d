internal import COpenSSL

/// AES-256-GCM through OpenSSL: secrets at rest (TOTP seeds) are sealed as
/// nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes), with associated data that
/// binds a sealed value to its row, so a value copied to another row fails.
package struct SealedBox: Sendable {
    /// Why opening failed.
    package enum Failure: Error, Sendable, Equatable {
        /// The key is not 32 bytes.
        case invalidKey
        /// The data was altered, belongs elsewhere, or was sealed under another key.
        case authenticationFailed
        /// OpenSSL refused an operation (out of memory): which, and its code.
        case cryptoFailure(OpenSSLError)
    }

    private let key: SecureBytes

    /// A box under a 32-byte key, copied into memory that is wiped when the box goes.
    package init(key: [UInt8]) throws(Failure) {
        guard key.count == 32 else { throw .invalidKey }
        self.key = SecureBytes(key)
    }

    /// Runs `body` with the key's bytes for OpenSSL.
    private func withKey<T>(_ body: (UnsafePointer<UInt8>) -> T) -> T {
        key.withUnsafeBytes { body($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Seals `plaintext`, binding it to `associatedData`.
    package func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws(Failure) -> [UInt8] {
        let nonce = SecureRandom.bytes(12)
        OpenSSLError.clear()
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .cryptoFailure(.last("EVP_CIPHER_CTX_new")) }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: 16)
        var length: Int32 = 0
        var total: Int32 = 0
        guard withKey({ EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, $0, nonce) }) == 1,
            associatedData.isEmpty
                || EVP_EncryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1,
            EVP_EncryptUpdate(ctx, &out, &length, plaintext, Int32(plaintext.count)) == 1
        else { throw .cryptoFailure(.last("EVP_EncryptUpdate")) }
        total = length
        let finished = out.withUnsafeMutableBufferPointer {
            EVP_EncryptFinal_ex(ctx, $0.baseAddress! + Int(total), &length)
        }
        guard finished == 1, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else {
            throw .cryptoFailure(.last("EVP_EncryptFinal_ex"))
        }
        total += length
        return nonce + out.prefix(Int(total)) + tag
    }

    /// Opens what `seal` made with the same key and associated data.
    package func open(_ sealed: [UInt8], associatedData: [UInt8]) throws(Failure) -> [UInt8] {
        guard sealed.count >= 28 else { throw .authenticationFailed }
        let nonce = Array(sealed.prefix(12))
        let tag = Array(sealed.suffix(16))
        let body = Array(sealed.dropFirst(12).dropLast(16))
        OpenSSLError.clear()
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .cryptoFailure(.last("EVP_CIPHER_CTX_new")) }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: body.count + 16)
        var length: Int32 = 0
        var tagCopy = tag
        guard withKey({ EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, $0, nonce) }) == 1,
            associatedData.isEmpty
                || EVP_DecryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1,
            EVP_DecryptUpdate(ctx, &out, &length, body, Int32(body.count)) == 1
        else { throw .cryptoFailure(.last("EVP_DecryptUpdate")) }
        let total = length
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, &tagCopy) == 1 else {
            throw .cryptoFailure(.last("EVP_CIPHER_CTX_ctrl(SET_TAG)"))
        }
        let finished = out.withUnsafeMutableBufferPointer {
            EVP_DecryptFinal_ex(ctx, $0.baseAddress! + Int(total), &length)
        }
        guard finished == 1 else {
            // A wrong tag is the expected failure; its queue entry is not news.
            OpenSSLError.clear()
            throw .authenticationFailed
        }
        return Array(out.prefix(Int(total + length)))
    }
}
