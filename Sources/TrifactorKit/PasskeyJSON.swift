import API
public import Foundation

/// The translation between the server's WebAuthn JSON (base64url strings) and the bytes
/// AuthenticationServices takes and gives. Pure, so the Apple adapter only moves bytes and
/// everything that can go wrong in the translation is tested on Linux.
public enum PasskeyJSON {
    /// The bytes of a base64url string (RFC 4648 §5), padded or not.
    /// - Throws: `.invalidOptions` for any character outside the base64url alphabet (standard base64's `+` and `/`
    ///   included: the server never sends them, so they mean the value is not what it seems).
    public static func bytes(_ base64url: String) throws(PasskeyError) -> Data {
        var body = Substring(base64url)
        var padding = 0
        while body.last == "=" {
            body.removeLast()
            padding += 1
        }
        guard padding <= 2, body.unicodeScalars.allSatisfy({ alphabet.contains($0) }) else {
            throw PasskeyError(.invalidOptions)
        }
        var text = body.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { throw PasskeyError(.invalidOptions) }
        return data
    }

    /// base64url without padding, as WebAuthn's `toJSON()` writes it.
    public static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The credential ids a registration must exclude (`excludeCredentials`), as the platform takes them: the
    /// account's passkeys, so registering again on the same Apple account fails with "already registered" instead
    /// of silently replacing the synced passkey and leaving the server a factor nobody holds.
    /// Only `public-key` descriptors count; repeats are dropped, the server's order is kept.
    /// - Throws: `.invalidOptions` for an id that is empty or not base64url. Skipping it instead would let a duplicate
    ///   be created, the very thing the list is for.
    public static func excludedCredentialIDs(_ options: CreationOptions) throws(PasskeyError) -> [Data] {
        try credentialIDs(options.excludeCredentials)
    }

    /// The credential ids an assertion may use (`allowCredentials`); empty means any passkey of the relying party.
    /// - Throws: `.invalidOptions` as `excludedCredentialIDs`.
    public static func allowedCredentialIDs(_ options: RequestOptions) throws(PasskeyError) -> [Data] {
        try credentialIDs(options.allowCredentials)
    }

    static func credentialIDs(_ descriptors: [CredentialDescriptor]) throws(PasskeyError) -> [Data] {
        var ids: [Data] = []
        for descriptor in descriptors where descriptor.type == "public-key" {
            let id = try bytes(descriptor.id)
            guard !id.isEmpty else { throw PasskeyError(.invalidOptions) }
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// A registration's `PublicKeyCredential.toJSON()` from the platform's raw fields. A registration without an
    /// attestation object is no credential the server can verify.
    /// - Throws: `.unexpectedCredential` when `attestationObject` is nil.
    public static func registration(credentialID: Data, clientDataJSON: Data, attestationObject: Data?)
        throws(PasskeyError) -> CredentialJSON
    {
        guard let attestationObject else { throw PasskeyError(.unexpectedCredential) }
        let id = base64url(credentialID)
        return CredentialJSON(
            id: id, rawId: id,
            response: .init(
                clientDataJSON: base64url(clientDataJSON),
                attestationObject: base64url(attestationObject), transports: ["internal", "hybrid"]))
    }

    /// An assertion's `PublicKeyCredential.toJSON()` from the platform's raw fields.
    /// - Throws: `.unexpectedCredential` without authenticator data or signature.
    public static func assertion(
        credentialID: Data, clientDataJSON: Data, authenticatorData: Data?, signature: Data?,
        userID: Data?
    ) throws(PasskeyError) -> CredentialJSON {
        guard let authenticatorData, let signature else { throw PasskeyError(.unexpectedCredential) }
        let id = base64url(credentialID)
        return CredentialJSON(
            id: id, rawId: id,
            response: .init(
                clientDataJSON: base64url(clientDataJSON), authenticatorData: base64url(authenticatorData),
                signature: base64url(signature), userHandle: userID.map(base64url)))
    }

    private static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".unicodeScalars)
}
