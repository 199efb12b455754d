import Core
import Foundation
import HTTP

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
    let registration: Configuration.Registration
    let registrationToken: String?
    let maxDynamicClients: Int

    /// The issuer as tokens name it: the public URL without a trailing slash.
    static func issuer(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    init(
        publicURL: URL, sealer: KeyRing, clients: ClientService, transactions: Transactions, clock: Clock,
        random: RandomSource,
        sessions: SessionService, secondFactors: SecondFactorService, brand: String,
        registration: Configuration.Registration = .off, registrationToken: String? = nil, maxDynamicClients: Int = 500
    ) {
        self.registration = registration
        self.registrationToken = registrationToken
        self.maxDynamicClients = maxDynamicClients
        let issuer = Self.issuer(publicURL)
        self.issuer = issuer
        self.brand = brand
        self.clients = clients
        keys = SigningKeys(transactions: transactions, sealer: sealer, clock: clock)
        let minter = TokenMinter(keys: keys, issuer: issuer, random: random)
        self.minter = minter
        flows = FlowService(
            transactions: transactions, clock: clock, random: random, sessions: sessions, secondFactors: secondFactors,
            hintedSubject: { token, client in minter.hintedSubject(token, clientID: client)?.subject })
        tokens = TokenService(
            transactions: transactions, clock: clock, random: random, minter: minter, policies: sessions.policies)
        clientAuthentication = ClientAuthentication(
            transactions: transactions, clock: clock, audiences: [issuer, issuer + "/token"])
        cookies = HostedCookies(secure: publicURL.scheme == "https")
    }

    func register(
        on router: inout Router, sessions: SessionService, secondFactors: SecondFactorService,
        passwordless: PasswordlessService
    ) {
        HostedRoutes(
            flows: flows, sessions: sessions, secondFactors: secondFactors, passwordless: passwordless,
            cookies: cookies, minter: minter, issuer: issuer,
            brand: brand
        ).register(on: &router)
        TokenRoutes(
            tokens: tokens, clients: clientAuthentication, minter: minter, keys: keys,
            metadata: ProviderMetadata(issuer: issuer, registration: registration != .off),
            transactions: flows.transactions, clock: flows.clock
        ).register(on: &router)
        RegistrationRoutes(
            clients: clients, transactions: flows.transactions, clock: flows.clock, mode: registration,
            initialToken: registrationToken, maxClients: maxDynamicClients, issuer: issuer
        ).register(on: &router)
    }
}
