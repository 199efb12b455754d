import Core
import Foundation
import HTTP
import JOSE
import Messaging
import Store

/// The OpenID Provider, built once when `TRIFACTOR_OIDC` is on: a second
/// front on the same services as the API (sessions, second factors, audit).
struct Provider: Sendable {
    let issuer: String
    let clients: ClientService
    let keys: SigningKeys
    let minter: TokenMinter
    let flows: FlowService
    let tokens: TokenService
    let clientAuthentication: ClientAuthentication
    let cookies: HostedCookies
    let brand: String
    /// The hosted pages' language when neither the request, the account nor the browser names one of ours.
    let language: String
    let registration: Configuration.Registration
    let registrationToken: String?
    let maxDynamicClients: Int
    let outbox: Outbox
    let requirePushedRequests: Bool
    let dpop: DPoP
    let fapi2Everywhere: Bool
    let backchannel: BackchannelService
    /// The SMS-pumping guard's settings, for the console's conversion chart.
    var conversion = VerifySettings.ConversionGuard()

    /// The issuer as tokens name it: the public URL without a trailing slash.
    static func issuer(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    init(
        publicURL: URL, sealer: KeyRing, clients: ClientService, transactions: Transactions, clock: Clock,
        random: RandomSource, sessions: SessionService, secondFactors: SecondFactorService, outbox: Outbox,
        brand: String, language: String = "en",
        registration: Configuration.Registration = .off, registrationToken: String? = nil, maxDynamicClients: Int = 500,
        requirePushedRequests: Bool = false, dpopNonces: Bool = false, fapi2Everywhere: Bool = false,
        detailsSchemas: [String: DetailsSchema] = [:]
    ) {
        self.fapi2Everywhere = fapi2Everywhere
        self.requirePushedRequests = requirePushedRequests
        dpop = DPoP(
            transactions: transactions, clock: clock,
            nonces: dpopNonces ? DPoP.Nonces(ring: sealer) : nil)
        self.registration = registration
        self.registrationToken = registrationToken
        self.maxDynamicClients = maxDynamicClients
        self.outbox = outbox
        let issuer = Self.issuer(publicURL)
        self.issuer = issuer
        self.brand = brand
        self.language = language
        self.clients = clients
        keys = SigningKeys(transactions: transactions, sealer: sealer, clock: clock)
        let minter = TokenMinter(keys: keys, issuer: issuer, random: random)
        self.minter = minter
        flows = FlowService(
            transactions: transactions, clock: clock, random: random, sessions: sessions, secondFactors: secondFactors,
            hintedSubject: { token, client in minter.hintedSubject(token, clientID: client)?.subject },
            requirePushedRequests: requirePushedRequests, fapi2Everywhere: fapi2Everywhere,
            detailsSchemas: detailsSchemas)
        tokens = TokenService(
            transactions: transactions, clock: clock, random: random, minter: minter, policies: sessions.policies)
        clientAuthentication = ClientAuthentication(
            transactions: transactions, clock: clock, audiences: [issuer, issuer + "/token", issuer + "/par"],
            issuer: issuer, fapi2Everywhere: fapi2Everywhere)
        cookies = HostedCookies(secure: publicURL.scheme == "https")
        let backchannel = BackchannelService(
            transactions: transactions, clock: clock, random: random, push: secondFactors.push, outbox: outbox,
            verifications: secondFactors.factors.phone.verifications, issuer: issuer,
            hintedSubject: { token, client in minter.hintedSubject(token, clientID: client)?.subject })
        self.backchannel = backchannel
        secondFactors.push.decided.add { purpose, _, now, db in try backchannel.decided(purpose, now: now, on: db) }
    }

    func register(
        on router: inout Router, sessions: SessionService, secondFactors: SecondFactorService,
        passwordless: PasswordlessService, enrollments: EnrollmentService, resets: PasswordResetService,
        accounts: AccountService, sitekeys: SitekeyService, admin: AdminService, webhooks: WebhookService
    ) {
        let hosted = HostedRoutes(
            flows: flows, sessions: sessions, secondFactors: secondFactors, passwordless: passwordless,
            enrollments: enrollments, resets: resets, accounts: accounts, sitekeys: sitekeys,
            authorizations: AuthorizationService(
                transactions: flows.transactions, clock: flows.clock, random: flows.random,
                secondFactors: secondFactors),
            backchannel: backchannel, cookies: cookies, minter: minter, issuer: issuer,
            brand: brand, defaultLanguage: language)
        hosted.register(on: &router)
        // The operator's console signs staff in through the hosted pages, as the built-in client.
        ConsoleRoutes(
            hosted: hosted, admin: admin, staff: StaffService(transactions: flows.transactions, clock: flows.clock),
            webhooks: webhooks, clients: clients, conversion: conversion
        ).register(on: &router)
        TokenRoutes(
            tokens: tokens, flows: flows, dpop: dpop, backchannel: backchannel, fapi2Everywhere: fapi2Everywhere,
            clients: clientAuthentication,
            minter: minter, keys: keys,
            metadata: ProviderMetadata(
                issuer: issuer, registration: registration != .off,
                requirePushedRequests: requirePushedRequests || fapi2Everywhere, fapi2: fapi2Everywhere,
                detailsTypes: flows.detailsSchemas.keys.sorted()),
            transactions: flows.transactions, clock: flows.clock
        ).register(on: &router)
        RegistrationRoutes(
            clients: clients, transactions: flows.transactions, clock: flows.clock, mode: registration,
            initialToken: registrationToken, maxClients: maxDynamicClients, issuer: issuer
        ).register(on: &router)
    }

    /// A user ended a session (in this transaction): the grants that lived on it end too (not those for offline
    /// use), and each client that registered a back-channel logout URI is sent a logout token through the outbox
    /// (retried, never lost, never for a rolled-back sign-out).
    func sessionEnded(_ session: SessionID, user: UserID, now: Int64, on db: any SQLConnection) throws {
        let rows = try db.query(
            """
            SELECT DISTINCT c.id AS client, c.backchannel_logout_uri AS uri, c.id_token_alg AS alg FROM oidc_grants g
            JOIN oidc_clients c ON c.id = g.client_id
            WHERE g.session_id = $1 AND g.revoked_at IS NULL AND c.backchannel_logout_uri IS NOT NULL
            """, [.text(session.raw)])
        try GrantRepository.revoke(session: session.raw, at: now, on: db)
        for row in rows {
            let client = try row.text("client")
            let token = try minter.logoutToken(
                clientID: client, subject: user.raw, sessionID: session.raw,
                algorithm: Algorithm(rawValue: try row.text("alg")) ?? .es256, now: now)
            try outbox.enqueue(
                channel: .logout, to: try row.text("uri"), text: token, ref: "logout:\(client):\(session.raw)",
                now: now,
                on: db)
        }
    }
}
