/// The OpenID Provider: whether it runs (its issuer is `TRIFACTOR_PUBLIC_URL`).
extension Setting {
    static let provider: [Setting] = [
        Setting(
            variable: "TRIFACTOR_OIDC", flag: "--oidc", valueName: "0|1",
            help: "Be an OpenID Provider: hosted sign-in, tokens for registered clients (needs --public-url)",
            defaultText: "0"
        ) { c, v in
            switch v.lowercased() {
            case "1", "true", "yes", "on": c.oidc = true
            case "0", "false", "no", "off", "": c.oidc = false
            default: return "TRIFACTOR_OIDC must be 0 or 1."
            }
            return nil
        }
    ]
}
