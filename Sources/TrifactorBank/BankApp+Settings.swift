import Foundation
import HTTP
import TrifactorKit

/// Settings: the customer's second factors (add an authenticator app,
/// remove one), recovery codes (shown once, printable), and active sessions
/// (sign out one, or every other). Changes that Trifactor guards with a
/// recent second factor send the customer through /confirm first.
extension BankApp {
    func addSettings(_ router: inout Router) {
        route(&router, "GET", "/settings") { [self] request in
            let (session, customer) = try customer(request)
            let client = trifactor(session, request)
            let factors = try blocking({ try await client.factors() })
            let others = try blocking({ try await client.sessions() })
            let factorRows: [HTML] = factors.map { factor in
                .element("li", [:], [
                    .text("\(FactorLabel.of(FactorHint(factor))) — \(factor.displayName), added \(Self.day(factor.enrolledAt)) "),
                    Page.form("/settings/factors/remove", session, [
                        .element("input", ["type": "hidden", "name": "factor", "value": factor.enrollmentID]),
                        Page.button("Remove \(factor.displayName)", kind: "link"),
                    ]),
                    Page.form("/settings/factors/rename", session, [
                        .element("input", ["type": "hidden", "name": "factor", "value": factor.enrollmentID]),
                        Page.field("New name for \(factor.displayName)", name: "name", value: nil, autocomplete: "off"),
                        Page.button("Rename", kind: "link"),
                    ]),
                ])
            }
            let sessionRows: [HTML] = others.map { s in
                .element("li", [:], [
                    .text("\(s.userAgent ?? "Unknown browser") from \(s.ip ?? "an unknown address"), last seen \(WireJSON.format(s.lastSeenAt).prefix(16).replacingOccurrences(of: "T", with: " "))"),
                    s.current ? .element("strong", [:], [" (this one)"]) : Page.form("/settings/sessions/revoke", session, [
                        .element("input", ["type": "hidden", "name": "session", "value": s.id]), Page.button("Sign out this session", kind: "link"),
                    ]),
                ])
            }
            return page(Page.layout("Settings", session: session, devPhone: configuration.devPhone, notice: session.takeNotice(), idle: configuration.idleTimeout,
                                    passkeys: true, [
                .element("section", ["class": "card", "aria-labelledby": "h-factors"], [
                    .element("h2", ["id": "h-factors"], ["Two-step verification"]), .element("ul", [:], factorRows),
                    Page.form("/settings/totp", session, [Page.button("Add an authenticator app", kind: "secondary")]),
                    factors.contains(where: { $0.kind == "phone" }) ? .empty : Page.link("Turn on codes by text message", "/setup/phone"),
                    Page.passkeyButton("Add a passkey (Touch ID, Face ID or a security key)", flow: "register"),
                ]),
                .element("section", ["class": "card", "aria-labelledby": "h-recovery"], [
                    .element("h2", ["id": "h-recovery"], ["Recovery codes"]),
                    Page.paragraph("Codes to sign in when you have none of your devices. A new set replaces the old one."),
                    Page.form("/settings/recovery", session, [Page.button("Make new recovery codes", kind: "secondary")]),
                ]),
                .element("section", ["class": "card", "aria-labelledby": "h-password"], [
                    .element("h2", ["id": "h-password"], ["Password"]),
                    Page.form("/settings/password", session, [
                        Page.field("Current password", name: "current_password", type: "password", autocomplete: "current-password"),
                        Page.field("New password", name: "new_password", type: "password", autocomplete: "new-password"),
                        Page.button("Change password", kind: "secondary"),
                    ]),
                ]),
                .element("section", ["class": "card", "aria-labelledby": "h-sessions"], [
                    .element("h2", ["id": "h-sessions"], ["Where you are signed in"]), .element("ul", [:], sessionRows),
                    Page.form("/settings/sessions/revoke-others", session, [Page.button("Sign out everywhere else", kind: "secondary")]),
                ]),
                browserCard(session, customer: customer, request),
            ]))
        }
        route(&router, "POST", "/settings/totp") { [self] request in
            let (session, _, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            do {
                let enrollment = try blocking({ try await client.enrollTOTP() })
                guard let svg = enrollment.qrSVG else { return refused(502, "The QR code could not be made. Nothing was changed.") }
                session.set(totp: (enrollment, svg))
                return page(totpPage(session, error: nil))
            } catch {
                return stepUpOrFail(session, error, returnTo: "/settings")
            }
        }
        route(&router, "GET", "/settings/totp/qr.svg") { [self] request in
            guard let session = session(request).session, case .signedIn = session.stage, let totp = session.totp else { return Response(status: 404) }
            return Response(status: 200, headers: [("Content-Type", "image/svg+xml"), ("Content-Security-Policy", "default-src 'none'")], body: Array(totp.qrSVG.utf8))
        }
        route(&router, "POST", "/settings/totp/confirm") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            guard let totp = session.totp else { return redirect("/settings") }
            do {
                _ = try blocking({ try await totp.enrollment.confirm(code: form["code"] ?? "", name: "Authenticator app") })
            } catch let error as TrifactorError where error.problem?.code == .invalidCode {
                return page(totpPage(session, error: "That code is wrong. Type the 6 digits your app shows now."), status: 400)
            }
            session.set(totp: nil)
            session.flash("Your authenticator app is added.")
            return redirect("/settings")
        }
        route(&router, "POST", "/settings/recovery") { [self] request in
            let (session, _, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            do {
                let codes = try blocking({ try await client.newRecoveryCodes() })
                return page(Page.layout("Your recovery codes", session: session, devPhone: configuration.devPhone, [
                    Page.paragraph("Print or write these down now: they are shown only once. Each works one time; the old set no longer works."),
                    .element("ol", ["class": "card codes"], codes.map { .element("li", [:], [.element("code", [:], [.text($0)])]) }),
                    Page.link("Done", "/settings"),
                ]))
            } catch {
                return stepUpOrFail(session, error, returnTo: "/settings")
            }
        }
        route(&router, "POST", "/settings/factors/remove") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            do {
                try blocking({ try await client.removeFactor(form["factor"] ?? "") })
                session.flash("Removed.")
                return redirect("/settings")
            } catch {
                return stepUpOrFail(session, error, returnTo: "/settings")
            }
        }
        route(&router, "POST", "/settings/password") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            let current = form.raw("current_password") ?? "", replacement = form.raw("new_password") ?? ""
            do {
                try blocking({ try await client.changePassword(current: current, new: replacement) })
            } catch let error as TrifactorError where !(error.problem?.invalidFields.isEmpty ?? true) {
                let sentences = (error.problem?.invalidFields ?? []).map { "\($0.name == "current_password" ? "Current password" : "New password") \($0.reason)." }
                session.flash(sentences.joined(separator: " "))
                return redirect("/settings")
            } catch {
                return stepUpOrFail(session, error, returnTo: "/settings")
            }
            session.flash("Your password is changed, and you are signed out everywhere else.")
            return redirect("/settings")
        }
        route(&router, "POST", "/settings/factors/rename") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            do {
                let renamed = try blocking({ try await client.renameFactor(form["factor"] ?? "", to: form["name"] ?? "") })
                session.flash("Renamed to \(renamed.displayName).")
            } catch {
                session.flash(Self.sentence(error))
            }
            return redirect("/settings")
        }
        route(&router, "POST", "/settings/sessions/revoke") { [self] request in
            let (session, form, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            try? blocking({ try await client.revokeSession(form["session"] ?? "") })
            session.flash("That session is signed out.")
            return redirect("/settings")
        }
        route(&router, "POST", "/settings/sessions/revoke-others") { [self] request in
            let (session, _, _) = try posted(request)
            _ = try customer(request)
            let client = trifactor(session, request)
            let all = try blocking({ try await client.sessions() })
            for other in all where !other.current { try? blocking({ try await client.revokeSession(other.id) }) }
            session.flash("You are signed out everywhere else.")
            return redirect("/settings")
        }
    }

    /// A change Trifactor wants a fresh second factor for goes through /confirm, then back; anything else is a page saying nothing changed.
    func stepUpOrFail(_ session: BankSession, _ error: any Error, returnTo: String) -> Response {
        if let problem = (error as? TrifactorError)?.problem, problem.code == .secondFactorRequired || problem.code == .reauthenticationRequired {
            session.set(returnPath: returnTo)
            session.flash("Confirm it's you first: that change needs a fresh second factor.")
            return redirect("/confirm")
        }
        return page(Page.layout("Not changed", session: session, devPhone: configuration.devPhone,
                                [Page.paragraph(Self.sentence(error) + " Nothing was changed."), Page.link("Back to settings", "/settings")]),
                    status: (error as? TrifactorError)?.problem?.status ?? 500)
    }

    func totpPage(_ session: BankSession, error: String?) -> HTML {
        Page.layout("Add an authenticator app", session: session, devPhone: configuration.devPhone, [
            Page.paragraph("Scan this code with your authenticator app, or type the secret below into it."),
            .element("img", ["src": "/settings/totp/qr.svg", "alt": "QR code for your authenticator app", "width": "220", "height": "220"]),
            .element("p", [:], [.text("Secret: "), .element("code", [:], [.text(session.totp?.enrollment.secret ?? "")])]),
            Page.form("/settings/totp/confirm", session, [
                Page.field("Code from the app", name: "code", error: error, autocomplete: "one-time-code", inputmode: "numeric", autofocus: true),
                Page.button("Add the app"),
            ]),
        ])
    }
}
