import Foundation

/// The OpenID Provider: whether it runs (its issuer is `TRIFACTOR_PUBLIC_URL`), and whether clients may
/// register themselves (RFC 7591).
extension Setting {
    static let provider: [Setting] = [
        bool(
            "TRIFACTOR_OIDC", "--oidc",
            "Be an OpenID Provider: hosted sign-in, tokens for registered clients (needs --public-url)"
        ) { $0.oidc = $1 },
        Setting(
            variable: "TRIFACTOR_OIDC_REGISTRATION", flag: "--oidc-registration", valueName: "off|token|open",
            help:
                "Dynamic client registration (RFC 7591): off, with an initial access token (token), or open to anyone, as agent clients need (open)",
            defaultText: "off"
        ) { c, v in
            guard let mode = Configuration.Registration(rawValue: v.lowercased()) else {
                return "TRIFACTOR_OIDC_REGISTRATION must be off, token or open."
            }
            c.registration = mode
            return nil
        },
        Setting(
            variable: "TRIFACTOR_OIDC_REGISTRATION_TOKEN_FILE", flag: "--oidc-registration-token-file",
            valueName: "PATH",
            help: "File holding the initial access token of --oidc-registration token (at least 32 characters)",
            defaultText: "none"
        ) { c, v in
            guard let data = FileManager.default.contents(atPath: v), let text = String(data: data, encoding: .utf8)
            else { return "TRIFACTOR_OIDC_REGISTRATION_TOKEN_FILE (\(v)) cannot be read." }
            let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.count >= 32,
                token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x21 && $0.value < 0x7f })
            else {
                return
                    "TRIFACTOR_OIDC_REGISTRATION_TOKEN_FILE must hold a token of at least 32 printable characters (openssl rand -hex 32 makes one)."
            }
            c.registrationToken = token
            return nil
        },
        int(
            "TRIFACTOR_OIDC_DYNAMIC_CLIENTS", "--oidc-dynamic-clients",
            "Most clients that may register themselves; further registrations are refused", "500", 1...1_000_000
        ) { $0.maxDynamicClients = $1 },
        bool(
            "TRIFACTOR_OIDC_REQUIRE_PAR", "--oidc-require-par",
            "Every authorization request must be pushed first (RFC 9126): /authorize takes only a request_uri from POST /par"
        ) { $0.requirePushedRequests = $1 },
        bool(
            "TRIFACTOR_OIDC_DPOP_NONCE", "--oidc-dpop-nonce",
            "DPoP proofs must carry a nonce from this server (RFC 9449 §8): a proof without one is answered use_dpop_nonce with a DPoP-Nonce"
        ) { $0.dpopNonces = $1 },
        bool(
            "TRIFACTOR_OIDC_FAPI2", "--oidc-fapi2",
            "Hold every client to FAPI 2.0 (pushed requests, PKCE, DPoP-bound tokens, private_key_jwt), not only those created with --fapi2"
        ) { $0.fapi2 = $1 },
        Setting(
            variable: "TRIFACTOR_OIDC_AUTHORIZATION_DETAILS_TYPES", flag: "--oidc-authorization-details-types",
            valueName: "DIR",
            help:
                "Folder of JSON Schemas, one TYPE.json per authorization_details type clients may ask for (RFC 9396), beside payment_initiation",
            defaultText: "none"
        ) { c, v in
            switch DetailsSchema.load(folder: v) {
            case .success(let schemas): c.detailsSchemas = schemas
            case .failure(let refusal): return "TRIFACTOR_OIDC_AUTHORIZATION_DETAILS_TYPES: \(refusal.sentence)"
            }
            return nil
        },
    ]
}
