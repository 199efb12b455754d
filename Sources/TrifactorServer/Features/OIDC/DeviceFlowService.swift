import Core
import Crypto
import Foundation
import Store

/// The device authorization grant (RFC 8628): a device without a browser (a CLI, a TV) asks for a pair of codes,
/// shows the user code while the user enters it on `/device` in a browser (hosted sign-in, then an explicit
/// approval), and polls the token endpoint with the device code until the user decided. Both codes are stored as
/// SHA-256; every change of state is one conditional UPDATE.
struct DeviceFlowService: Sendable {
    let tokens: TokenService

    var transactions: Transactions { tokens.transactions }
    var clock: Clock { tokens.clock }
    var random: RandomSource { tokens.random }
    var issuer: String { tokens.minter.issuer }

    /// A code lives ten minutes (RFC 8628 §3.2 `expires_in`); the device polls every five seconds at first.
    static let lifetime: Int64 = 10 * 60 * 1000
    static let interval = 5
    /// Requests per client address at `/device_authorization`: 20 at once, then one every 5 seconds.
    static let perAddress = RateLimiter.Limit(burst: 20, rate: 0.2)
    /// The most codes that may wait for a user at once: per client and address, and per client.
    static let pendingPerAddress = 20
    static let pendingPerClient = 10_000

    /// What `/device_authorization` answers (§3.2).
    struct Issued: Sendable {
        let deviceCode: String
        /// `BCDF-GHJK`.
        let userCode: String
        let verificationURI: String
        let verificationURIComplete: String
        let expiresIn: Int
        let interval: Int
    }

    /// `POST /device_authorization` for an authenticated client (§3.1): a device code (256 random bits) and a user
    /// code, both kept as SHA-256.
    /// - Throws: `OAuthError`: `unauthorized_client` without the grant, `invalid_scope`, `slow_down`-free 429s
    ///   (`temporarily_unavailable`) past the limits.
    func authorize(client: OIDCClient, scope: String?, audit: AuditContext) throws -> Issued {
        guard client.grantTypes.contains(.deviceCode) else {
            throw OAuthError(code: "unauthorized_client", description: "This client may not use the device grant.")
        }
        guard let scopes = Scope.parse(scope ?? "openid"), !scopes.isEmpty else {
            throw OAuthError.invalidScope("scope is malformed.")
        }
        // As at /authorize: the standard scopes only as registered; a resource server's own are named on the page.
        if let refused = client.unregisteredScope(in: scopes) {
            throw OAuthError.invalidScope("This client may not ask for the scope \(refused.prefix(64)).")
        }
        let now = clock.now().millis
        let deviceCode = Base64URL.encode(random.bytes(32))
        let origin = audit.clientKey
        return try transactions.write { db in
            if let wait = try RateLimiter.take(
                "device:address:\(origin)", limit: Self.perAddress, nowMillis: now, on: db)
            {
                throw OAuthError(
                    code: "temporarily_unavailable", description: "Too many device requests: try again in \(wait) s.",
                    status: 429, retryAfter: wait)
            }
            // A public client's id is anyone's to send: a stranger fills at most their own address's share.
            guard
                try DeviceCodeRepository.pending(clientID: client.id, origin: origin, now: now, on: db)
                    < Self.pendingPerAddress,
                try DeviceCodeRepository.pending(clientID: client.id, origin: nil, now: now, on: db)
                    < Self.pendingPerClient
            else {
                throw OAuthError(
                    code: "temporarily_unavailable",
                    description: "Too many device codes wait for a user: try again when some have expired.",
                    status: 429, retryAfter: 60)
            }
            var userCode = UserCode.make(random)
            while try DeviceCodeRepository.userCodeTaken(UserCode.hash(userCode), now: now, on: db) {
                userCode = UserCode.make(random)
            }
            let record = DeviceAuthorization(
                id: SHA256.hex(deviceCode), clientID: client.id, scopes: scopes, status: .pending, amr: [],
                interval: Self.interval, expiresAt: now + Self.lifetime, createdAt: now)
            try DeviceCodeRepository.insert(record, userCodeHash: UserCode.hash(userCode), origin: origin, on: db)
            try AuditLog.append(
                audit.event(
                    .oidcDeviceCodeIssued, .success,
                    detail: "client=\(client.id) scope=\(scopes.joined(separator: "+"))"),
                at: now, on: db)
            let shown = UserCode.display(userCode)
            return Issued(
                deviceCode: deviceCode, userCode: shown, verificationURI: issuer + "/device",
                verificationURIComplete: issuer + "/device?user_code=" + shown, expiresIn: Int(Self.lifetime / 1000),
                interval: Self.interval)
        }
    }

    /// The token endpoint's `urn:ietf:params:oauth:grant-type:device_code` (§3.4, §3.5): tokens once the user
    /// approved, for the client the code was issued to, once.
    /// - Throws: `OAuthError` `authorization_pending`, `slow_down` (the interval grows by 5 s), `access_denied`,
    ///   `expired_token`, `invalid_grant` (unknown, another client's, or used), `unauthorized_client`.
    func redeem(
        deviceCode: String, client: OIDCClient, dpop: DPoP.Proof?, audit: AuditContext
    ) throws -> TokenService.Issued {
        guard client.grantTypes.contains(.deviceCode) else {
            throw OAuthError(code: "unauthorized_client", description: "This client may not use the device grant.")
        }
        let now = clock.now().millis
        let id = SHA256.hex(deviceCode)
        let grantID = Base64URL.encode(random.bytes(16))
        let refresh = client.grantTypes.contains(.refreshToken) ? Base64URL.encode(random.bytes(32)) : nil
        // The poll is recorded even when it is refused: the interval counts from every poll.
        let outcome = try transactions.write { db -> Result<Grant, OAuthError> in
            guard let found = try DeviceCodeRepository.find(id, on: db), found.clientID == client.id else {
                return .failure(.invalidGrant("The device code is not valid for this client."))
            }
            if found.status == .used { return .failure(.invalidGrant("The device code was already used.")) }
            guard now < found.expiresAt else {
                return .failure(OAuthError(code: "expired_token", description: "The device code has expired."))
            }
            guard try DeviceCodeRepository.poll(id, now: now, on: db) else {
                return .failure(
                    OAuthError(
                        code: "slow_down",
                        description: "Poll every \(found.interval + 5) seconds at most."))
            }
            switch found.status {
            case .pending:
                return .failure(
                    OAuthError(code: "authorization_pending", description: "The user has not decided yet."))
            case .denied:
                return .failure(OAuthError(code: "access_denied", description: "The user denied the request."))
            case .used, .approved: break
            }
            guard let userID = found.userID, try DeviceCodeRepository.redeem(id, grantID: grantID, on: db) else {
                return .failure(.invalidGrant("The device code was already used."))
            }
            let grant = Grant(
                id: grantID, clientID: client.id, userID: userID, sessionID: found.sessionID, scopes: found.scopes,
                resource: nil, acr: found.acr, amr: found.amr, authTime: found.authTime,
                refreshExpiresAt: refresh == nil ? nil : now + TokenService.refreshLifetime, createdAt: now,
                revokedAt: nil,
                // RFC 9449 §5: a public client's refresh token is bound to the key of the proof it came with.
                dpopJKT: client.isPublic ? dpop?.thumbprint : nil)
            try GrantRepository.insert(grant, refreshHash: refresh.map(SHA256.hex), on: db)
            try AuditLog.append(
                audit.event(
                    .oidcTokensIssued, .success, userID: UserID(userID),
                    detail: "client=\(client.id) grant=device_code"),
                at: now, on: db)
            return .success(grant)
        }
        let grant = try outcome.get()
        return try tokens.issue(
            grant, client: client, nonce: nil, sessionID: grant.sessionID, refresh: refresh, dpop: dpop, now: now)
    }
}
