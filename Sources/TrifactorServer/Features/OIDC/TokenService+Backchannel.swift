import Core
import Crypto
import Foundation
import JOSE
import Store

extension TokenService {
    /// The CIBA grant (CIBA Core §10.1): `auth_req_id` redeemed once the user approved on their device. Until then,
    /// `authorization_pending`; polled sooner than the interval, `slow_down` (and the interval grows by 5 s, §11);
    /// past its expiry, `expired_token`; denied, `access_denied` (§11). Tokens are issued once, as for a code.
    func backchannel(
        _ authReqID: String, client: OIDCClient, dpop: DPoP.Proof? = nil, audit: AuditContext
    ) throws -> Issued {
        guard client.grantTypes.contains(.ciba) else {
            throw OAuthError(code: "unauthorized_client", description: "This client is not registered for CIBA.")
        }
        let now = clock.now().millis
        let id = SHA256.hex(authReqID)
        let grantID = Base64URL.encode(random.bytes(16))
        let refresh = client.grantTypes.contains(.refreshToken) ? Base64URL.encode(random.bytes(32)) : nil
        let outcome = try transactions.write { db -> Result<Grant, OAuthError> in
            guard authReqID.utf8.count == 43, var request = try BackchannelRepository.find(id, on: db),
                request.clientID == client.id
            else { return .failure(.invalidGrant("auth_req_id is not valid for this client.")) }
            switch request.status {
            case .issued: return .failure(.invalidGrant("auth_req_id was already used."))
            case .denied: return .failure(Self.denied)
            case .pending: break
            }
            guard request.expiresAt > now else {
                return .failure(OAuthError(code: "expired_token", description: "The request has expired: start again."))
            }
            // §7.3: the client waits `interval` seconds between polls; each poll too soon adds 5 seconds (§11). One
            // conditional write decides, so two polls at once cannot both pass.
            guard try BackchannelRepository.poll(id, at: now, on: db) else {
                request.interval += 5
                try BackchannelRepository.slowDown(id, at: now, on: db)
                return .failure(
                    OAuthError(
                        code: "slow_down", description: "Poll every \(request.interval) seconds at most."))
            }
            guard let userID = request.userID.map(UserID.init), let approval = request.approvalID,
                let answer = try BackchannelRepository.approval(approval, on: db)
            else { return .failure(Self.pending) }
            switch answer.status {
            case .pending: return .failure(answer.expiresAt > now ? Self.pending : Self.expired)
            case .denied:
                _ = try BackchannelRepository.finish(id, .denied, on: db)
                try AuditLog.append(
                    audit.event(
                        .oidcBackchannelDenied, .denied, userID: userID,
                        detail: "client=\(client.id) denied on the device"),
                    at: now, on: db)
                return .failure(Self.denied)
            case .approved: break
            }
            let user = try AccountRepository.find(id: userID, on: db)
            let frozen = try SecondFactorService.frozenApproval(userID, client: audit, now: now, on: db)
            guard let factor = try FactorRepository.find(answer.factorID, userID: userID, on: db)
            else { return .failure(.invalidGrant("auth_req_id was already used.")) }
            // A device key released by the user's check is the hardware-key level; without one, a second factor. A
            // link texted to the phone proves one factor, the phone's possession: the one-factor level (a session's
            // AAL1), said as `sms` (RFC 8176).
            let level: ACR
            let amr: [String]
            switch factor.credential {
            case .device(let keys):
                level = keys.approval != nil ? .hardwareKey : .mfa
                amr = keys.approval != nil ? ["hwk", "user", "mfa"] : ["hwk", "mfa"]
            case .phone:
                level = .password
                amr = ["sms"]
            default:
                return .failure(.invalidGrant("auth_req_id was already used."))
            }
            // The same gates as a pushed sign-in (a frozen second step, a disabled account), and the level asked for:
            // the request ends denied, and every later poll hears so.
            let refusal: String? =
                user?.disabledAt != nil
                ? "the account is disabled"
                : frozen != nil
                    ? "the second step is frozen"
                    : request.acr.flatMap { level < $0 ? "the approval cannot reach \($0.rawValue)" : nil }
            if let refusal {
                _ = try BackchannelRepository.finish(id, .denied, on: db)
                try AuditLog.append(
                    audit.event(
                        .oidcBackchannelDenied, .denied, userID: userID, detail: "client=\(client.id) \(refusal)"),
                    at: now, on: db)
                return .failure(Self.denied)
            }
            guard
                try PushRepository.consume(
                    ApprovalID(approval), factorID: factor.id, purpose: .backchannel(requestHash: id), now: now, on: db),
                try BackchannelRepository.finish(id, .issued, on: db)
            else { return .failure(.invalidGrant("auth_req_id was already used.")) }
            let grant = Grant(
                id: grantID, clientID: client.id, userID: userID.raw, sessionID: nil, scopes: request.scopes,
                resource: nil, acr: level, amr: amr, authTime: now,
                refreshExpiresAt: refresh == nil ? nil : now + Self.refreshLifetime, createdAt: now, revokedAt: nil,
                dpopJKT: nil)
            try GrantRepository.insert(grant, refreshHash: refresh.map(SHA256.hex), on: db)
            try FactorRepository.markUsed(factor.id, at: now, on: db)
            try AuditLog.append(
                audit.event(.oidcTokensIssued, .success, userID: userID, detail: "client=\(client.id) grant=ciba"),
                at: now, on: db)
            return .success(grant)
        }
        return try issue(
            try outcome.get(), client: client, nonce: nil, sessionID: nil, refresh: refresh, dpop: dpop, now: now)
    }

    static let pending = OAuthError(
        code: "authorization_pending", description: "The user has not answered on their device yet.")
    static let denied = OAuthError(code: "access_denied", description: "The user denied the request.")
    static let expired = OAuthError(code: "expired_token", description: "The request has expired: start again.")
}
