import HTTP

/// Trifactor's HTTP application: every feature's routes over the services.
package enum Application {
    /// The router with every feature registered.
    /// - Throws: `ResourceFailure` when a file the dev pages need is missing.
    static func router(_ s: Services, probe: ReadinessProbe) throws -> Router {
        var router = Router()
        HealthRoutes(probe: probe).register(on: &router)
        DoctorRoute(
            keys: s.sealer, trustedProxies: s.configuration.http.trustedProxies,
            connectionLimit: s.configuration.http.connectionLimit, clock: s.clock
        ).register(on: &router)
        try ContractRoutes().register(on: &router)
        MetricsRoutes(token: s.configuration.metricsToken, transactions: s.transactions, clock: s.clock).register(
            on: &router)
        let idempotency = Idempotency(transactions: s.transactions, clock: s.clock)
        var routes = APIRoutes(router: router, sessions: s.sessions, idempotency: idempotency)
        AccountsRoutes(accounts: s.accounts).register(on: &routes)
        SitekeyRoutes(sitekeys: s.sitekeys).register(on: &routes)
        SessionsRoutes(sessions: s.sessions).register(on: &routes)
        let policies = s.sessions.policies
        EnrollmentRoutes(enrollments: s.enrollments).register(on: &routes)
        let mfa = MFARoutes(secondFactors: s.secondFactors, passkeys: s.factors.passkey, policies: policies)
        mfa.register(on: &routes)
        PasswordResetRoutes(resets: s.passwordResets, mfa: mfa).register(on: &routes)
        PushRoutes(push: s.push).register(on: &routes)
        PasswordlessRoutes(passwordless: s.passwordless, policies: policies).register(on: &routes)
        AuthorizationRoutes(authorizations: s.authorizations, mfa: mfa).register(on: &routes)
        AdminRoutes(
            admin: s.admin, clients: s.clients, webhooks: s.webhooks, keys: s.adminKeys, transactions: s.transactions,
            clock: s.clock
        )
        .register(on: &routes)
        router = routes.router
        let v = s.configuration.verify
        VerifyRoutes(
            verifications: s.verifications, keys: s.keys, transactions: s.transactions, clock: s.clock,
            idempotency: idempotency,
            perIP: .init(burst: v.perIPBurst, rate: v.perIPRate)
        ).register(on: &router)
        if !s.configuration.providers.isEmpty {
            DeliveryRoutes(
                transactions: s.transactions, clock: s.clock, accounts: s.configuration.providers,
                publicURL: s.configuration.publicURL,
                perIP: .init(burst: v.perIPBurst, rate: v.perIPRate), verifications: s.verifications
            ).register(on: &router)
        }
        s.provider?.register(
            on: &router, sessions: s.sessions, secondFactors: s.secondFactors, passwordless: s.passwordless,
            enrollments: s.enrollments, resets: s.passwordResets, accounts: s.accounts, sitekeys: s.sitekeys,
            admin: s.admin, webhooks: s.webhooks)
        if s.configuration.dev { try DevRoutes(transactions: s.transactions).register(on: &router) }
        return router
    }
}
