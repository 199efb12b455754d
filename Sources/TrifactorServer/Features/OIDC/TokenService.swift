import Core
import Crypto
import Foundation
import JOSE
import Store

/// The token endpoint's grants (RFC 6749 §4.1.3, §6, §4.4): each one
/// checked whole, then spent with one conditional UPDATE, so a code or a
/// refresh token is redeemed once even across instances.
struct TokenService: Sendable {
    let transactions: Transactions
    let clock: Clock
    let random: RandomSource
    let minter: TokenMinter
    let policies: SessionPolicies

    /// Refresh tokens live this long from their last use.
    static let refreshLifetime: Int64 = 30 * 24 * 3600 * 1000
    /// A grant lives this long at most, however often it is refreshed: the user signs in again then.
    static let grantLifetime: Int64 = 90 * 24 * 3600 * 1000

    /// What the token endpoint answers (RFC 6749 §5.1, OIDC Core §3.1.3.3).
    struct Issued: Sendable {
        let accessToken: String
        let expiresIn: Int64
        /// `DPoP` for a token bound to a key, else `Bearer`.
        var tokenType = "Bearer"
        var refreshToken: String?
        var idToken: String?
        let scope: String
        /// RFC 9396 §7: the authorization details the token carries.
        var authorizationDetails: [JSONValue]?
    }

    // MARK: authorization_code

    func exchange(
        code: String, client: OIDCClient, redirectURI: String?, verifier: String?, resource: String?,
        dpop: DPoP.Proof? = nil, audit: AuditContext
    ) throws -> Issued {
        guard client.grantTypes.contains(.authorizationCode) else {
            throw OAuthError(code: "unauthorized_client", description: "This client may not use the code grant.")
        }
        let now = clock.now().millis
        let codeHash = SHA256.hex(code)
        let grantID = Base64URL.encode(random.bytes(16))
        var refresh = client.grantTypes.contains(.refreshToken) ? Base64URL.encode(random.bytes(32)) : nil
        let outcome = try transactions.write {
            db -> Result<(Grant, AuthorizationRequest, SessionRecord?), OAuthError> in
            guard let found = try FlowRepository.find(codeHash: codeHash, on: db), found.clientID == client.id else {
                return .failure(.invalidGrant("The code is not valid for this client."))
            }
            let request = found.flow.request
            if found.flow.progress.status == .exchanged {
                // RFC 6749 §4.1.2: a code used twice revokes what its first use issued.
                if let first = found.grantID, try GrantRepository.revoke(first, at: now, on: db) {
                    try AuditLog.append(
                        audit.event(
                            .oidcTokenRevoked, .denied, userID: found.userID.map(UserID.init),
                            detail: "client=\(client.id) code reused"),
                        at: now, on: db)
                }
                return .failure(.invalidGrant("The code was already used."))
            }
            guard found.flow.progress.status == .codeIssued, let expires = found.codeExpiresAt, expires > now,
                let userID = found.userID
            else { return .failure(.invalidGrant("The code has expired.")) }
            // RFC 6749 §4.1.3: the same redirect_uri as the request, when it was sent there (it always is here).
            guard redirectURI == request.redirectURI else {
                return .failure(.invalidGrant("redirect_uri does not match the authorization request."))
            }
            if let failure = Self.checkPKCE(challenge: request.codeChallenge, verifier: verifier) {
                return .failure(failure)
            }
            if let resource, resource != request.resource {
                return .failure(
                    OAuthError(code: "invalid_target", description: "resource was not in the authorization request."))
            }
            // RFC 9449 §10: a code bound to a key (dpop_jkt) is redeemed with a proof of that key.
            if let jkt = request.dpopJKT, dpop?.thumbprint != jkt {
                return .failure(
                    OAuthError(
                        code: "invalid_dpop_proof",
                        description: "The code is bound to a DPoP key (dpop_jkt): send a proof made with that key."))
            }
            let session = try found.sessionID.flatMap { try SessionRepository.find(id: SessionID($0), on: db) }
            // RFC 9396: details are approved with the code; a flow that has them but no approval never gave one.
            // The approval must be this user's, still approved (not spent, void or expired), and for these very
            // details: a flow whose account changed after the approval carries none.
            if let details = request.authorizationDetails {
                guard found.flow.progress.detailsApproved == true,
                    let approval = found.flow.progress.detailsAuthorization,
                    let hash = try AuthorizationRepository.approvedHash(
                        AuthorizationID(approval), userID: UserID(userID), now: now, on: db),
                    ConstantTime.equals(hash, AuthorizationService.canonicalHash(details.action(client: client.id)))
                else { return .failure(.invalidGrant("The authorization details were not approved by this user.")) }
            }
            guard try FlowRepository.exchange(codeHash: codeHash, grantID: grantID, on: db) else {
                // Redeemed meanwhile by another request: a second use, so what the first gave is revoked.
                if let first = try FlowRepository.find(codeHash: codeHash, on: db)?.grantID {
                    try GrantRepository.revoke(first, at: now, on: db)
                }
                return .failure(.invalidGrant("The code was already used."))
            }
            let grant = Grant(
                id: grantID, clientID: client.id, userID: userID, sessionID: found.sessionID, scopes: request.scopes,
                resource: request.resource, acr: session.map(FlowService.level(of:)),
                amr: session.map(TokenMinter.amr) ?? [], authTime: session.map(FlowService.authTime(of:)),
                refreshExpiresAt: refresh == nil ? nil : now + Self.refreshLifetime, createdAt: now, revokedAt: nil,
                // RFC 9449 §5: a public client's refresh token is bound to the key; a confidential client's is
                // constrained by its authentication, and each access token by the proof it came with.
                dpopJKT: client.isPublic ? dpop?.thumbprint : nil,
                authorizationDetails: request.authorizationDetails.map {
                    String(decoding: $0.canonical, as: UTF8.self)
                },
                authorizationID: request.authorizationDetails == nil ? nil : found.flow.progress.detailsAuthorization)
            // An approval of a payment is for one payment: no refresh token brings it back.
            if grant.authorizationDetails != nil { refresh = nil }
            try GrantRepository.insert(grant, refreshHash: refresh.map(SHA256.hex), on: db)
            try AuditLog.append(
                audit.event(
                    .oidcTokensIssued, .success, userID: UserID(userID),
                    detail: "client=\(client.id) grant=authorization_code"),
                at: now, on: db)
            return .success((grant, request, session))
        }
        let (grant, request, session) = try outcome.get()
        return try issue(
            grant, client: client, nonce: request.nonce, sessionID: session?.id.raw, refresh: refresh, dpop: dpop,
            now: now)
    }

    /// RFC 7636 §4.6: BASE64URL(SHA256(verifier)) must equal the challenge. A verifier without a challenge is
    /// refused too (a downgrade would otherwise pass, RFC 9700 §4.8.2).
    static func checkPKCE(challenge: String?, verifier: String?) -> OAuthError? {
        switch (challenge, verifier) {
        case (nil, nil): return nil
        case (nil, .some): return .invalidGrant("code_verifier was sent but the request had no code_challenge.")
        case (.some, nil): return .invalidGrant("code_verifier is required.")
        case (.some(let challenge), .some(let verifier)):
            guard (43...128).contains(verifier.utf8.count), AuthorizationRequest.isUnreserved(verifier),
                ConstantTime.equals(Base64URL.encode(SHA256.hash(Array(verifier.utf8))), challenge)
            else { return .invalidGrant("code_verifier does not match the code_challenge.") }
            return nil
        }
    }

    // MARK: refresh_token

    func refresh(
        _ token: String, client: OIDCClient, scope: String?, resource: String? = nil, dpop: DPoP.Proof? = nil,
        rotate: Bool = true, audit: AuditContext
    ) throws -> Issued {
        guard client.grantTypes.contains(.refreshToken) else {
            throw OAuthError(code: "unauthorized_client", description: "This client may not use refresh tokens.")
        }
        let now = clock.now().millis
        let old = SHA256.hex(token)
        let next = Base64URL.encode(random.bytes(32))
        let outcome = try transactions.write { db -> Result<Grant, OAuthError> in
            guard let grant = try GrantRepository.find(refreshHash: old, on: db) else {
                // RFC 9700 §4.14.2: a spent refresh token used again revokes its whole family.
                if let family = try GrantRepository.grantID(spentRefreshHash: old, on: db),
                    try GrantRepository.revoke(family, at: now, on: db)
                {
                    try AuditLog.append(
                        audit.event(.oidcRefreshReused, .denied, detail: "client=\(client.id) grant=\(family)"),
                        at: now,
                        on: db)
                }
                return .failure(.invalidGrant("The refresh token is not valid."))
            }
            guard grant.clientID == client.id else { return .failure(.invalidGrant("The refresh token is not valid.")) }
            // RFC 9449 §5: a refresh token of a bound grant works only with a proof of the same key.
            if let jkt = grant.dpopJKT, dpop?.thumbprint != jkt {
                return .failure(
                    OAuthError(
                        code: "invalid_dpop_proof",
                        description: "The refresh token is bound to a DPoP key: send a proof made with that key."))
            }
            guard grant.revokedAt == nil, let expires = grant.refreshExpiresAt, expires > now,
                now - grant.createdAt < Self.grantLifetime
            else {
                return .failure(.invalidGrant("The refresh token has expired."))
            }
            // A disabled or erased user's grants give nothing more.
            if let userID = grant.userID {
                guard let user = try AccountRepository.find(id: UserID(userID), on: db), user.disabledAt == nil else {
                    try GrantRepository.revoke(grant.id, at: now, on: db)
                    return .failure(.invalidGrant("The refresh token is not valid."))
                }
            }
            if !grant.isOffline, let sid = grant.sessionID {
                // Without offline_access, the grant lasts as long as the sign-in it came from.
                let session = try SessionRepository.find(id: SessionID(sid), on: db)
                guard let session, session.endedAt == nil,
                    !policies[session.aal].isExpired(
                        created: Date(millis: session.createdAt), lastSeen: Date(millis: session.lastSeenAt),
                        now: Date(millis: now))
                else {
                    try GrantRepository.revoke(grant.id, at: now, on: db)
                    return .failure(.invalidGrant("The sign-in this token came from has ended."))
                }
            }
            // RFC 8707 §2.2: a refreshed token is for the resource that was authorized, never another.
            if let resource, resource != grant.resource {
                return .failure(
                    OAuthError(code: "invalid_target", description: "resource was not authorized for this grant."))
            }
            if let scope {
                // RFC 6749 §6: a narrower scope may be asked for, never a wider one.
                guard let asked = Scope.parse(scope), asked.allSatisfy(grant.scopes.contains) else {
                    return .failure(.invalidScope("scope must be within what was granted."))
                }
            }
            // FAPI 2.0 §5.3.2.1 9 (final): no rotation for its clients (confidential, their access tokens bound to a
            // key; a lost answer must not lose the grant): the same token lives on from this use, re-checked in the
            // write as a rotation is, so a refresh racing a revocation gives nothing. Everyone else's is rotated, and
            // a reuse ends the family.
            let expiresAt = min(now + Self.refreshLifetime, grant.createdAt + Self.grantLifetime)
            let rotated =
                try rotate
                ? GrantRepository.rotate(
                    grant.id, from: old, to: SHA256.hex(next), expiresAt: now + Self.refreshLifetime, now: now, on: db)
                : GrantRepository.renew(grant.id, refreshHash: old, expiresAt: expiresAt, on: db)
            if !rotate && !rotated { return .failure(.invalidGrant("The refresh token is not valid.")) }
            guard rotated else {
                // Another request rotated it first (READ COMMITTED lets both read it): a second use, so the family
                // ends as for any reuse (RFC 9700 §4.14.2).
                if try GrantRepository.revoke(grant.id, at: now, on: db) {
                    try AuditLog.append(
                        audit.event(.oidcRefreshReused, .denied, detail: "client=\(client.id) grant=\(grant.id) race"),
                        at: now, on: db)
                }
                return .failure(.invalidGrant("The refresh token is not valid."))
            }
            try AuditLog.append(
                audit.event(
                    .oidcTokensIssued, .success, userID: grant.userID.map(UserID.init),
                    detail: "client=\(client.id) grant=refresh_token"), at: now, on: db)
            var bound = grant
            // RFC 9449 §5: a public client that starts using DPoP at a refresh binds its refresh token from then on.
            if grant.dpopJKT == nil, client.isPublic, let jkt = dpop?.thumbprint {
                try GrantRepository.bind(grant.id, dpopJKT: jkt, on: db)
                bound.dpopJKT = jkt
            }
            return .success(bound)
        }
        var grant = try outcome.get()
        if let scope, let asked = Scope.parse(scope) {
            grant = Grant(
                id: grant.id, clientID: grant.clientID, userID: grant.userID, sessionID: grant.sessionID, scopes: asked,
                resource: grant.resource, acr: grant.acr, amr: grant.amr, authTime: grant.authTime,
                refreshExpiresAt: grant.refreshExpiresAt, createdAt: grant.createdAt, revokedAt: nil,
                dpopJKT: grant.dpopJKT)
        }
        var issued = try accessToken(for: grant, now: now, dpop: dpop)
        issued.refreshToken = rotate ? next : token
        return issued
    }

    // MARK: client_credentials

    func clientCredentials(
        client: OIDCClient, scope: String?, resource: String?, dpop: DPoP.Proof? = nil, audit: AuditContext
    ) throws -> Issued {
        guard client.grantTypes.contains(.clientCredentials), !client.isPublic else {
            throw OAuthError(code: "unauthorized_client", description: "This client may not use client_credentials.")
        }
        // No user is involved: the user scopes have no meaning here.
        let allowed = client.scopes.filter { !["openid", "offline_access", "profile", "email", "phone"].contains($0) }
        var scopes = allowed
        if let scope {
            guard let asked = Scope.parse(scope), asked.allSatisfy(allowed.contains) else {
                throw OAuthError.invalidScope("This client may not ask for that scope here.")
            }
            scopes = asked
        }
        let now = clock.now().millis
        try transactions.write { db in
            try AuditLog.append(
                audit.event(.oidcTokensIssued, .success, detail: "client=\(client.id) grant=client_credentials"),
                at: now,
                on: db)
        }
        var access = TokenMinter.Access(
            subject: client.id, clientID: client.id, scopes: scopes, audience: resource ?? minter.issuer, grantID: nil)
        access.dpopJKT = dpop?.thumbprint
        let (token, expiresIn, _) = try minter.accessToken(access, now: now)
        return Issued(
            accessToken: token, expiresIn: expiresIn, tokenType: dpop == nil ? "Bearer" : "DPoP",
            scope: scopes.joined(separator: " "))
    }

    /// An access token for `grant`, bound to the grant's DPoP key, or (a grant bound to none) to the key of the
    /// request's proof when it brought one.
    func accessToken(for grant: Grant, now: Int64, dpop: DPoP.Proof? = nil) throws -> Issued {
        let access = TokenMinter.Access(
            subject: grant.userID ?? grant.clientID, clientID: grant.clientID, scopes: grant.scopes,
            audience: grant.resource ?? minter.issuer, grantID: grant.id, authTime: grant.authTime, acr: grant.acr,
            amr: grant.amr, sessionID: grant.sessionID, dpopJKT: grant.dpopJKT ?? dpop?.thumbprint,
            authorizationDetails: grant.details)
        let (token, expiresIn, _) = try minter.accessToken(access, now: now)
        return Issued(
            accessToken: token, expiresIn: expiresIn, tokenType: access.dpopJKT == nil ? "Bearer" : "DPoP",
            scope: grant.scopes.joined(separator: " "), authorizationDetails: access.authorizationDetails)
    }
}
