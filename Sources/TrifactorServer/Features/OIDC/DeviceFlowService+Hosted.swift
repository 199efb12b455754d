import Core
import Crypto
import Foundation
import Store

extension DeviceFlowService {
    /// Codes typed on `/device` per client address: 20 at once, then one every 30 seconds; and from everywhere
    /// together 1,000 at once, then 5 a second, so many addresses cannot guess either (RFC 8628 §5.1). Every try
    /// counts, right or wrong, and is counted before the code is looked at.
    static let entriesPerAddress = RateLimiter.Limit(burst: 20, rate: 1.0 / 30)
    static let entriesEverywhere = RateLimiter.Limit(burst: 1_000, rate: 5)
    /// Refused codes audited per address: 20 at once, then one a minute (a flood cannot fill the audit log).
    static let refusalAudits = RateLimiter.Limit(burst: 20, rate: 1.0 / 60)

    /// What a code typed on `/device` leads to.
    enum Entry {
        /// The sign-in that ends on the device's confirmation page, with the device's client.
        case flow(AuthorizationFlow, OIDCClient)
        /// Not a code of this server, or not one any more: the same answer whatever was wrong (no code is
        /// confirmed to exist by its answer but a live one's).
        case unknown
        case expired
        /// Approved, denied or redeemed already.
        case decided
        /// Too many tries from this address (or everywhere): wait this many seconds.
        case limited(Int)
    }

    /// Checks a code typed on `/device` and, for a live one, starts the hosted sign-in that ends on its
    /// confirmation page (bound to this browser, as any flow).
    func enter(_ typed: String, browser: String, audit: AuditContext) throws -> Entry {
        let now = clock.now().millis
        let origin = audit.clientKey
        let normalized = UserCode.normalize(typed)
        return try transactions.write { db -> Entry in
            let wait =
                try RateLimiter.take(
                    "device:entry:\(origin)", limit: Self.entriesPerAddress, nowMillis: now, on: db)
                ?? RateLimiter.take("device:entry:*", limit: Self.entriesEverywhere, nowMillis: now, on: db)
            func refused(_ entry: Entry, _ reason: String) throws -> Entry {
                if try RateLimiter.take(
                    "device:audit:\(origin)", limit: Self.refusalAudits, nowMillis: now, on: db) == nil
                {
                    try AuditLog.append(audit.event(.oidcDeviceCodeRefused, .denied, detail: reason), at: now, on: db)
                }
                return entry
            }
            if let wait { return try refused(.limited(wait), "too many tries") }
            guard let normalized,
                let found = try DeviceCodeRepository.find(
                    userCodeHash: UserCode.hash(normalized), on: db)
            else { return try refused(.unknown, "unknown code") }
            guard found.expiresAt > now else { return try refused(.expired, "client=\(found.clientID) expired") }
            guard found.status == .pending else {
                return try refused(.decided, "client=\(found.clientID) \(found.status.rawValue)")
            }
            guard let client = try ClientRepository.find(found.clientID, on: db) else { return .unknown }
            let request = AuthorizationRequest(
                clientID: client.id, redirectURI: issuer + "/device", scopes: found.scopes, responseMode: .query,
                prompts: [], acrRequested: false, uiLocales: [])
            var progress = AuthorizationFlow.Progress()
            progress.browser = SHA256.hex(browser)
            progress.device = found.id
            let flow = AuthorizationFlow(
                id: Base64URL.encode(random.bytes(32)), request: request, progress: progress, createdAt: now,
                expiresAt: found.expiresAt)
            try FlowRepository.insert(flow, on: db)
            try AuditLog.append(
                audit.event(.oidcDeviceCodeEntered, .success, detail: "client=\(client.id)"), at: now, on: db)
            return .flow(flow, client)
        }
    }

    /// The device code of flow `flowID` and its client, in whatever state, for the pages after the decision: nil
    /// unless the flow is this browser's and names a device (an address made up, or opened in another browser,
    /// learns nothing and can show no outcome).
    func outcome(flowID: String?, browser: String?) throws -> (DeviceAuthorization, OIDCClient)? {
        guard let flowID, SessionToken.isWellFormed(flowID), let browser else { return nil }
        return try transactions.read { db in
            guard let flow = try FlowRepository.find(flowID, on: db), let mark = flow.progress.browser,
                ConstantTime.equals(mark, SHA256.hex(browser)), let id = flow.progress.device,
                let device = try DeviceCodeRepository.find(id, on: db),
                let client = try ClientRepository.find(device.clientID, on: db)
            else { return nil }
            return (device, client)
        }
    }

    /// The device code a flow approves, while it waits for the user's decision.
    func pending(_ id: String) throws -> DeviceAuthorization? {
        let now = clock.now().millis
        return try transactions.read { db in
            try DeviceCodeRepository.find(id, on: db).flatMap { $0.status == .pending && $0.expiresAt > now ? $0 : nil }
        }
    }

    /// The signed-in user's decision on the device code `id` (RFC 8628 §3.3): approved with how they signed in, or
    /// denied; false when the code no longer waits (expired, or decided in another tab).
    func decide(_ id: String, approve: Bool, session: SessionRecord, audit: AuditContext) throws -> Bool {
        let now = clock.now().millis
        return try transactions.write { db in
            guard var found = try DeviceCodeRepository.find(id, on: db) else { return false }
            found.status = approve ? .approved : .denied
            found.userID = session.userID.raw
            found.sessionID = session.id.raw
            found.acr = FlowService.level(of: session)
            found.amr = TokenMinter.amr(session)
            found.authTime = FlowService.authTime(of: session)
            guard try DeviceCodeRepository.decide(found, now: now, on: db) else { return false }
            try AuditLog.append(
                audit.event(
                    approve ? .oidcDeviceApproved : .oidcDeviceDenied, approve ? .success : .denied,
                    userID: session.userID,
                    detail: "client=\(found.clientID) scope=\(found.scopes.joined(separator: "+"))"),
                at: now, on: db)
            return true
        }
    }
}
