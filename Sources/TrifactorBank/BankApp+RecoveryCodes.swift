import Foundation
import HTTP
import TrifactorKit
import WebUI

/// Recovery codes: made (after a confirmation when Trifactor wants one),
/// then shown from the session's memory only until the customer says they
/// saved them: copied by a button of the bank script, downloaded as a text
/// file, or printed (the print sheet prints the codes alone).
extension BankApp {
    /// The routes of recovery codes: each HTTP method and path, and the handler that answers it.
    func addRecoveryCodes(_ router: inout Router) {
        route(&router, "POST", "/settings/recovery", renewRecoveryCodes)
        route(&router, "GET", "/settings/recovery", showRecoveryCodes)
        route(&router, "GET", "/settings/recovery/codes.txt", downloadRecoveryCodes)
        route(&router, "POST", "/settings/recovery/done", recoveryCodesSaved)
    }

    /// `POST /settings/recovery`: a new set of recovery codes (the old set dies).
    func renewRecoveryCodes(_ request: Request) throws -> Response {
        _ = try posted(request)
        let (session, _) = try customer(request)
        return makeRecoveryCodes(session, request)
    }

    /// `GET /settings/recovery`: the new recovery codes, until the customer says they saved them.
    func showRecoveryCodes(_ request: Request) throws -> Response {
        let (session, _) = try customer(request)
        guard let codes = session.flows({ $0.recoveryCodes }) else { return redirect("/settings") }
        return page(recoveryPage(session, request, codes))
    }

    /// `GET /settings/recovery/codes.txt`: the new recovery codes as a text file.
    func downloadRecoveryCodes(_ request: Request) throws -> Response {
        let (session, _) = try customer(request)
        guard let codes = session.flows({ $0.recoveryCodes }) else { return redirect("/settings") }
        let text =
            "Trifactor Bank recovery codes for \(session.stage.email ?? "your account")\n"
            + "Made on \(Self.day(now())). Each code works once; a new set replaces this one.\n\n"
            + codes.joined(separator: "\n") + "\n"
        return Response(
            status: 200,
            headers: [
                ("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Content-Disposition", "attachment; filename=\"trifactor-bank-recovery-codes.txt\""),
                ("Content-Security-Policy", "default-src 'none'"),
            ], body: Array(text.utf8))
    }

    /// `POST /settings/recovery/done`: the codes leave the session.
    func recoveryCodesSaved(_ request: Request) throws -> Response {
        let (session, _, _) = try posted(request)
        session.flows { $0.recoveryCodes = nil }
        session.flash("Your new recovery codes are on. Keep them somewhere safe.")
        return redirect("/settings")
    }

    /// Makes a new set of recovery codes (the old set dies) and shows them, or asks to confirm it's you first.
    func makeRecoveryCodes(_ session: BankSession, _ request: Request) -> Response {
        let client = trifactor(session, request)
        return change(session, .newRecoveryCodes) {
            let codes = try blocking({ try await client.newRecoveryCodes() })
            session.flows { $0.recoveryCodes = codes }
            return redirect("/settings/recovery")
        }
    }

    func recoveryPage(_ session: BankSession, _ request: Request, _ codes: [String]) -> HTML {
        Page.layout(
            "Your recovery codes", screen(session, request, tab: .settings),
            [
                Page.paragraph(
                    "Save these now: this page shows them until you leave it. Each works one time; the old set no longer works."
                ),
                .element(
                    "div", ["class": "card", "id": "codes-card"],
                    [
                        .element(
                            "ol", ["class": "codes", "id": "codes"],
                            codes.map { .element("li", [:], [.element("code", [:], [.text($0)])]) })
                    ]),
                Page.actions([
                    .element(
                        "button",
                        [
                            "type": "button", "class": "secondary", "data-copy": "codes", "data-status": "copy-status",
                            "hidden": "",
                        ], ["Copy the codes"]),
                    .element(
                        "a",
                        [
                            "href": "/settings/recovery/codes.txt", "download": "trifactor-bank-recovery-codes.txt",
                            "class": "button secondary",
                        ],
                        ["Download as a text file"]),
                    .element(
                        "button", ["type": "button", "class": "secondary", "data-print": "", "hidden": ""],
                        ["Print them"]),
                ]),
                .element("p", ["id": "copy-status", "role": "status", "class": "muted"]),
                Page.form("/settings/recovery/done", session, [Page.button("I have saved them")]),
            ])
    }
}
