internal import CSodium

/// Secrets sealed under a passphrase, as a local vault keeps them: a key
/// derived with Argon2id (`crypto_pwhash`, libsodium's interactive or
/// moderate limits), then XChaCha20-Poly1305 (`crypto_aead_xchacha20poly1305_ietf`)
/// with a random 192-bit nonce per seal. A wrong passphrase and a changed
/// byte fail alike, when the tag does not verify.
package enum PassphraseSeal {
    /// Salt length for `deriveKey`.
    package static let saltBytes = Int(crypto_pwhash_SALTBYTES)
    /// Key length: 256 bits.
    package static let keyBytes = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)
    static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    /// Why sealing or opening failed.
    package enum Failure: Error, Sendable, Equatable {
        /// Argon2id could not run with these limits (out of memory, or limits outside libsodium's bounds).
        case derivationFailed
        /// The tag did not verify: a wrong key (passphrase) or changed bytes.
        case authenticationFailed
        /// Too short to hold a nonce and a tag.
        case truncated
    }

    /// A 256-bit key from `passphrase` and `salt` with Argon2id.
    /// - Throws: `Failure.derivationFailed` for limits libsodium refuses or memory it cannot get.
    package static func deriveKey(passphrase: SecureBytes, salt: [UInt8], opsLimit: UInt64, memLimit: Int)
        throws(Failure) -> SecureBytes
    {
        guard salt.count == saltBytes, opsLimit >= UInt64(crypto_pwhash_opslimit_min()),
            memLimit >= crypto_pwhash_memlimit_min(),
            memLimit <= 1 << 30
        else { throw .derivationFailed }
        do {
            return try SecureBytes(count: keyBytes) { out in
                let rc = passphrase.withUnsafeBytes { p in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keyBytes),
                        p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(p.count), salt, opsLimit, memLimit,
                        crypto_pwhash_ALG_ARGON2ID13)
                }
                if rc != 0 { throw Failure.derivationFailed }
            }
        } catch { throw .derivationFailed }
    }

    /// `plaintext` sealed under `key`, bound to `associatedData`: nonce ‖ ciphertext ‖ tag.
    package static func seal(_ plaintext: SecureBytes, key: SecureBytes, associatedData: [UInt8] = []) -> [UInt8] {
        precondition(key.count == keyBytes, "an XChaCha20-Poly1305 key is 32 bytes")
        let nonce = SecureRandom.bytes(nonceBytes)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var written: UInt64 = 0
        plaintext.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &out, &written, m.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(m.count),
                    associatedData, UInt64(associatedData.count), nil, nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return nonce + out.prefix(Int(written))
    }

    /// Opens what `seal` made with the same key and associated data.
    /// - Throws: `Failure.authenticationFailed` for a wrong key or changed bytes, `.truncated` for too few bytes.
    package static func open(_ sealed: [UInt8], key: SecureBytes, associatedData: [UInt8] = []) throws(Failure)
        -> SecureBytes
    {
        guard key.count == keyBytes else { throw .authenticationFailed }
        guard sealed.count >= nonceBytes + tagBytes else { throw .truncated }
        let nonce = Array(sealed.prefix(nonceBytes))
        let box = Array(sealed.dropFirst(nonceBytes))
        do {
            return try SecureBytes(count: box.count - tagBytes) { out in
                var written: UInt64 = 0
                let rc = key.withUnsafeBytes { k in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(
                        out.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil, box, UInt64(box.count),
                        associatedData, UInt64(associatedData.count), nonce,
                        k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
                if rc != 0 { throw Failure.authenticationFailed }
            }
        } catch { throw .authenticationFailed }
    }
}
