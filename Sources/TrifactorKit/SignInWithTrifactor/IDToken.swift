public import Foundation

/// An ID token that passed every check: its signature against the provider's keys, `iss`, `aud`, `azp`, `exp`,
/// `nonce` and the level asked for. Only `SignInWithTrifactor` makes one.
public struct IDToken: Sendable, Equatable, Codable {
    /// The token as it came (compact JWS): for `id_token_hint` when signing out.
    public let raw: String
    /// The issuer (`iss`).
    public let issuer: String
    /// The user's stable id at the provider (`sub`).
    public let subject: String
    /// The audiences (`aud`): this app's client id among them.
    public let audiences: [String]
    /// When it expires (`exp`).
    public let expiresAt: Date
    /// When it was issued (`iat`).
    public let issuedAt: Date
    /// When the user last proved who they are (`auth_time`).
    public let authTime: Date?
    /// The `nonce` of the authorization request (absent from tokens of a refresh).
    public let nonce: String?
    /// The level as the token names it (`acr`), known to this SDK or not.
    public let acr: String?
    /// The methods the user proved (`amr`, RFC 8176: `pwd`, `otp`, `hwk`, `mfa`, …).
    public let methods: [String]
    /// The party the token was issued to (`azp`).
    public let authorizedParty: String?
    /// The provider's sign-in session (`sid`), as back-channel logout names it.
    public let sessionID: String?
    /// The email address, when the client asked for the profile in ID tokens and the `email` scope.
    public let email: String?
    /// Whether the provider verified `email` (`email_verified`), when it said.
    public var emailVerified: Bool? = nil

    /// `acr` as one of Trifactor's levels; nil for a value this SDK does not know.
    public var level: AuthenticationLevel? { acr.flatMap(AuthenticationLevel.init(rawValue:)) }
}

/// The checks of OpenID Connect Core §3.1.3.7 on an ID token, as plain code over a key set: no IO.
struct IDTokenVerifier: Sendable {
    let issuer: String
    let clientID: String
    let crypto: any TokenCrypto
    /// How far `exp` may lie in the past (clocks disagree).
    let leeway: TimeInterval

    /// A token's parts before any check.
    struct Parts {
        let algorithm: String
        let keyID: String?
        let signingInput: Data
        let signature: Data
        let claims: [String: Any]
        /// The header's `typ`, if any.
        var type: String? = nil
    }

    static func parts(_ token: String) throws(TrifactorError) -> Parts {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3, let headerData = Base64URL.decode(pieces[0]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let payload = Base64URL.decode(pieces[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any],
            let signature = Base64URL.decode(pieces[2])
        else { throw .idTokenRejected("The ID token is not a signed JWT.") }
        guard let algorithm = header["alg"] as? String, ["ES256", "RS256"].contains(algorithm) else {
            throw .idTokenRejected("The ID token is signed with an algorithm this app does not accept.")
        }
        return Parts(
            algorithm: algorithm, keyID: header["kid"] as? String,
            signingInput: Data("\(pieces[0]).\(pieces[1])".utf8), signature: signature, claims: claims,
            type: header["typ"] as? String)
    }

    /// Whether one of `keys` signed `parts`.
    func isSigned(_ parts: Parts, by keys: JSONWebKeySet) -> Bool {
        keys.candidates(algorithm: parts.algorithm, keyID: parts.keyID).contains { key in
            switch key.material {
            case .p256(let x, let y):
                parts.signature.count == 64
                    && crypto.isValidES256(signature: parts.signature, message: parts.signingInput, x: x, y: y)
            case .rsa(let modulus, let exponent):
                crypto.isValidRS256(
                    signature: parts.signature, message: parts.signingInput, modulus: modulus, exponent: exponent)
            }
        }
    }

    /// The claims checked, once the signature was: `nonce` must match when given (an authorization's token), and
    /// `minimum` is the level the app asked for.
    func claims(_ token: String, _ parts: Parts, now: Date, nonce: String?, minimum: AuthenticationLevel?)
        throws(TrifactorError) -> IDToken
    {
        let c = parts.claims
        guard let iss = c["iss"] as? String, iss == issuer else {
            throw .idTokenRejected("The ID token was issued by another provider.")
        }
        let audiences: [String] =
            if let one = c["aud"] as? String { [one] } else { (c["aud"] as? [Any])?.compactMap { $0 as? String } ?? [] }
        guard audiences.contains(clientID) else { throw .idTokenRejected("The ID token was issued to another app.") }
        let azp = c["azp"] as? String
        if audiences.count > 1 || azp != nil, azp != clientID {
            throw .idTokenRejected("The ID token was issued to another app.")
        }
        guard let sub = c["sub"] as? String, !sub.isEmpty, let exp = Self.time(c["exp"]), let iat = Self.time(c["iat"])
        else { throw .idTokenRejected("The ID token lacks a subject or its times.") }
        guard now.timeIntervalSince(exp) <= leeway else { throw .idTokenRejected("The ID token has expired.") }
        let tokenNonce = c["nonce"] as? String
        if let nonce, tokenNonce != nonce {
            throw .idTokenRejected("The ID token belongs to another sign-in (its nonce differs).")
        }
        let acr = c["acr"] as? String
        if let minimum {
            guard let level = acr.flatMap(AuthenticationLevel.init(rawValue:)), level >= minimum else {
                throw .idTokenRejected("The sign-in was proved at a lower level than this app asked for.")
            }
        }
        var idToken = IDToken(
            raw: token, issuer: iss, subject: sub, audiences: audiences, expiresAt: exp, issuedAt: iat,
            authTime: Self.time(c["auth_time"]), nonce: tokenNonce, acr: acr,
            methods: (c["amr"] as? [Any])?.compactMap { $0 as? String } ?? [], authorizedParty: azp,
            sessionID: c["sid"] as? String, email: c["email"] as? String)
        idToken.emailVerified = c["email_verified"] as? Bool
        return idToken
    }

    /// A NumericDate claim (seconds since 1970).
    private static func time(_ value: Any?) -> Date? {
        if let seconds = value as? Int { return Date(timeIntervalSince1970: TimeInterval(seconds)) }
        return (value as? Double).map { Date(timeIntervalSince1970: $0) }
    }
}
