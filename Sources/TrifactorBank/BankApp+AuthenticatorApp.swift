import Foundation
import HTTP
import TrifactorKit
import WebUI

/// Adding an authenticator app: the QR code, the secret in groups of four,
/// and an `otpauth://` link for a customer on the phone that holds the app;
/// then a code from the app confirms it.
extension BankApp {
    /// Wrong codes an enrollment takes before Trifactor ends it.
    static let enrollmentTries = 5

    /// The routes of adding an authenticator app: each HTTP method and path, and the handler that answers it.
    func addAuthenticatorApp(_ router: inout Router) {
        route(&router, "GET", "/settings/totp", showAuthenticatorApp)
        route(&router, "GET", "/settings/totp/qr.svg", showAuthenticatorAppQR)
        route(&router, "POST", "/settings/totp/confirm", confirmAuthenticatorApp)
    }

    /// `GET /settings/totp`: the QR code and secret of the authenticator app being added.
    func showAuthenticatorApp(_ request: Request) throws -> Response {
        let (session, _) = try customer(request)
        guard let totp = session.flows({ $0.totp }) else { return redirect("/settings") }
        let draft = session.draft(for: "/settings/totp", now: now())
        return page(totpPage(session, request, totp.enrollment, error: draft?.errors["code"]))
    }

    /// `GET /settings/totp/qr.svg`: the QR code of the authenticator app being added, as SVG.
    func showAuthenticatorAppQR(_ request: Request) -> Response {
        guard let session = session(request).session, session.isSignedIn, let totp = session.flows({ $0.totp }) else {
            return Response(status: 404)
        }
        return Response(
            status: 200,
            headers: [
                ("Content-Type", "image/svg+xml"), ("Content-Security-Policy", "default-src 'none'"),
                ("Cache-Control", "no-store"),
            ],
            body: Array(totp.qrSVG.utf8))
    }

    /// `POST /settings/totp/confirm`: a code from the app adds it; too many wrong codes end the enrollment.
    func confirmAuthenticatorApp(_ request: Request) throws -> Response {
        let (_, form, _) = try posted(request)
        let (session, _) = try customer(request)
        guard let totp = session.flows({ $0.totp }) else { return redirect("/settings") }
        do {
            _ = try blocking({ try await totp.enrollment.confirm(code: form["code"] ?? "", name: "Authenticator app") })
        } catch {
            var tries = session.flows { $0.totpTries }
            switch Self.verdict(error, tries: &tries, texted: false) {
            case .again?:
                session.flows { $0.totpTries = tries }
                guard tries >= Self.enrollmentTries else {
                    let left = Self.enrollmentTries - tries
                    return back(
                        to: "/settings/totp", session,
                        FormDraft(errors: [
                            "code":
                                "That code is wrong. Type the 6 digits your app shows now (\(left) more \(left == 1 ? "try" : "tries"))."
                        ]))
                }
                fallthrough
            case .newCode?, .over?:
                session.flows {
                    $0.totp = nil
                    $0.totpTries = 0
                }
                session.flash(
                    "That code did not work \(Self.enrollmentTries) times, so the app was not added. Start again: the QR code will be new."
                )
                return redirect("/settings")
            case nil:
                throw error
            }
        }
        session.flows {
            $0.totp = nil
            $0.totpTries = 0
        }
        session.flash("Your authenticator app is added.")
        return redirect("/settings")
    }

    /// Starts adding an authenticator app and shows its QR code, or asks to confirm it's you first.
    func startTOTP(_ session: BankSession, _ request: Request) -> Response {
        let client = trifactor(session, request)
        return change(session, .addAuthenticatorApp) {
            let enrollment = try blocking({ try await client.enrollTOTP() })
            guard let svg = enrollment.qrSVG else {
                session.flash("The QR code could not be made. Nothing was changed.")
                return redirect("/settings")
            }
            session.flows {
                $0.totp = (enrollment, svg)
                $0.totpTries = 0
            }
            return redirect("/settings/totp")
        }
    }

    func totpPage(_ session: BankSession, _ request: Request, _ enrollment: PendingEnrollment, error: String?) -> HTML {
        var setup: [HTML] = [
            Page.paragraph(
                "Scan this code with your authenticator app (Google Authenticator, Microsoft Authenticator, 1Password, …):"
            ),
            .element(
                "img",
                [
                    "class": "qr", "src": "/settings/totp/qr.svg", "alt": "QR code for your authenticator app",
                    "width": "220", "height": "220",
                ]),
        ]
        if let uri = enrollment.otpauthURI, uri.hasPrefix("otpauth://") {
            setup.append(Page.paragraph("On the phone that has the app?"))
            setup.append(Page.link("Open it in your authenticator app", uri, class: "button secondary"))
        }
        setup.append(Page.paragraph("Or type this secret into the app:"))
        setup.append(
            .element(
                "p", [:],
                [
                    .element(
                        "code", ["class": "secret", "aria-label": "Secret, in groups of four"],
                        [
                            .text((enrollment.secret ?? "").grouped(by: 4))
                        ])
                ]))
        return Page.layout(
            "Add an authenticator app", screen(session, request, tab: .settings),
            [
                .element("div", ["class": "card"], setup),
                codeForm(
                    "/settings/totp/confirm", session, error: error, label: "Code from the app", button: "Add the app"),
                Page.link("Cancel", "/settings"),
            ])
    }
}
