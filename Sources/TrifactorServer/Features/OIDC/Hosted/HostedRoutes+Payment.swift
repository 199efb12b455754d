import API
import Core
import Foundation
import HTTP
import JOSE
import WebUI

/// The payment page: a request's authorization details (RFC 9396) stated in full and approved with a second factor
/// bound to them, through the same `AuthorizationService` as the API's bound actions. The text (and the call) names
/// amount and payee; a passkey signs a challenge derived from the details' hash; a wrong code counts against the
/// approval and the user's lockout alike. The code goes to the client only once it is approved.
extension HostedRoutes {
    /// The factors that can approve a payment: those whose proof is bound to it (dynamic linking, PSD2 RTS Art. 5): a
    /// text (or call) that names amount and payee, a passkey that signs a challenge over its hash, and for a plain
    /// payment (nothing in the details that its action does not state) a device, which shows every detail and signs
    /// their hash with its decision. An authenticator app's code is the same whatever is paid, so it does not approve
    /// payments; recovery codes are for getting back in.
    static func approving(_ hints: [SessionService.Hint], for details: AuthorizationDetails) -> [SessionService.Hint] {
        hints.filter { [.phone, .passkey].contains($0.kind) || ($0.kind == .device && details.isPlainPayment) }
    }

    /// The signed-in caller and the factors that can approve; or where the browser goes instead.
    private func approver(_ c: Context, _ request: Request) throws -> Result<
        (Caller, [SessionService.Hint], AuthorizationDetails), PageAnswer
    > {
        guard let caller = try signedIn(request) else {
            return .failure(PageAnswer(Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&signedout=1")))
        }
        guard let details = c.flow.request.authorizationDetails, c.flow.progress.detailsApproved != true else {
            // Back or a reload after the approval: the flow goes on where it is.
            return .failure(
                PageAnswer(try advance(c, token: HostedCookies.value(cookies.session, in: request), request)))
        }
        return .success((caller, Self.approving(try secondFactors.hints(caller.user.id), for: details), details))
    }

    /// A response carried out of `approver`.
    struct PageAnswer: Error {
        let response: Response
        init(_ r: Response) { response = r }
    }

    /// `GET /authorize/payment[?factor=ID][&sent=1][&error=…]`: the payment, and the chosen factor's step.
    func paymentPage(_ request: Request) throws -> Response {
        guard var c = try context(request) else { return lostFlow(request) }
        if HostedPage.isWaitPoll(request) {
            // The waiting page's script asks whether anything changed: answered without doing anything, so that the
            // reload it makes then does the work (and a code is never issued to a request that drops the answer).
            // Signed out meanwhile: a change too (the reload then asks to sign in).
            guard try signedIn(request) != nil, c.flow.progress.detailsApproved != true,
                try devicePushState(c) == "pending"
            else { return Response(status: 200) }
            return .noContent
        }
        let (caller, hints, details): (Caller, [SessionService.Hint], AuthorizationDetails)
        switch try approver(c, request) {
        case .failure(let answer): return answer.response
        case .success(let found): (caller, hints, details) = found
        }
        let t = c.frame.text
        // A bound approval needs a verified email: that, not a missing factor, is what the user must fix first.
        if caller.user.emailVerifiedAt == nil { return unverified(c, details) }
        guard let chosen = hints.first(where: { $0.factorID.raw == request.query["factor"] }) ?? hints.first else {
            // No factor here can approve a payment: the page says why and how to get one, and goes back to the app.
            return cannotApprove(c, details, t("payment.no_factor"))
        }
        var error = Self.errorSentence(request.query, t)
        if request.query["error"] == "ended" { error = t("payment.ended") }
        if request.query["error"] == "pushes" { error = t("payment.device.limit") }
        // The approval's own count (five wrong codes end it and a new one begins), not a sign-in's.
        if request.query["error"] == "wrong", let left = Self.clamped(request.query["left"], to: 0...100) {
            error = t("payment.wrong.left", ["left": t.number(left)])
        }
        c.frame.footer = t("footer.paying", ["client": c.client.name, "brand": brand])
        // Approved on the device while this page showed another way (Back, "Text or call"): the payment goes on.
        if chosen.kind != .device, let response = try approvedOnDevice(&c, details, caller, request) {
            return response
        }
        var step: [HTML] = []
        let factor = HostedPage.hidden("factor", chosen.factorID.raw)
        switch chosen.kind {
        case .phone
        where request.query["sent"] == "1"
            || (c.flow.progress.detailsAuthorization != nil && c.flow.progress.detailsFactor == chosen.factorID.raw):
            step = [
                HostedPage.paragraph(t("payment.sms.sent", ["phone": chosen.maskedPhone ?? t("common.your_phone")])),
                codeForm(c, factor, error: error, label: t("code.sms.label"), hint: t("code.sms.hint")),
                HostedPage.form(
                    "/authorize/payment/send", c.frame,
                    [
                        factor,
                        HostedPage.actions([HostedPage.button(t("code.send_new"), kind: "secondary")]),
                    ]),
            ]
            error = nil
        case .phone:
            step = [
                HostedPage.form(
                    "/authorize/payment/send", c.frame,
                    [
                        factor,
                        HostedPage.paragraph(
                            t("payment.sms.will_send", ["phone": chosen.maskedPhone ?? t("common.your_phone")])),
                        HostedPage.actions([HostedPage.button(t("code.text_me"))]),
                    ])
            ]
        case .passkey:
            // Nothing is sent: the approval and the passkey's challenge over the details' hash are made as the page is
            // drawn (a reload asks the same approval again, so its count of refusals still counts).
            let created: AuthorizationService.Created?
            do {
                created = try approval(
                    &c, chosen, details, caller, Self.audit(request, for: c.client, t), challenge: true)
            } catch AuthorizationFailure.unverifiedEmail {
                return unverified(c, details)
            } catch let failure as SecondFactorFailure {
                error = Self.sentence(failure, t)
                created = nil
            }
            if case .passkey(let options)? = created?.challenge, let json = try? JSONEncoder().encode(options) {
                c.frame.script = true
                step = [
                    passkeyForm(
                        "/authorize/payment", c, factorID: chosen.factorID.raw, options: json,
                        sentence: t("payment.passkey", ["passkey": chosen.displayName ?? t("common.your_passkey")]),
                        button: t("payment.approve"))
                ]
            }
        case .device:
            let device = HostedPage.device(chosen.displayName, t)
            if c.flow.progress.detailsPush != nil, c.flow.progress.detailsPushFactor == chosen.factorID.raw {
                switch try pushed(&c, details, caller, request) {
                case .answer(let response): return response
                case .waiting(let number):
                    return waiting(c, details, device: device, number: number, chosen: chosen, among: hints)
                case .again(let sentence): error = sentence
                }
            }
            step = [
                HostedPage.form(
                    "/authorize/payment/send", c.frame,
                    [
                        factor, HostedPage.paragraph(t("payment.device.will_ask", ["device": device])),
                        HostedPage.actions([HostedPage.button(t("device.send"))]),
                    ])
            ]
        default:
            break
        }
        var body: [HTML] = [statement(details, t)]
        if let error { body.append(.element("p", ["class": "error", "role": "alert"], [.text(error)])) }
        body += step
        body.append(otherWays(c, chosen: chosen, among: hints, path: "/authorize/payment"))
        body.append(cancelForm(c))
        let status = request.query["error"] == nil ? 200 : 422
        return HostedPage.response(
            HostedPage.layout(
                t("payment.title"), c.frame, notice: t("payment.notice", ["client": c.client.name]), body),
            c.frame, status: status)
    }

    /// The details as the user approves them: amount, payee and account, the account paid from, the reference, and
    /// any other type by name.
    func statement(_ details: AuthorizationDetails, _ t: HostedText) -> HTML {
        var rows: [(String, String)] = []
        if let p = details.payment {
            // Written as the text that names the payment writes it (one formatter for the page, the text, the call).
            rows.append((t("payment.amount"), t.amount(p.amount, currency: p.currency)))
            rows.append((t("payment.to"), p.creditorName))
            rows.append((t("payment.iban"), IBAN.grouped(p.creditorIBAN)))
            if let debtor = p.debtorIBAN { rows.append((t("payment.from"), IBAN.grouped(debtor))) }
            if let text = p.remittance { rows.append((t("payment.reference"), text)) }
        }
        for item in details.items {
            guard let members = item.object, let type = members["type"]?.string else { continue }
            if type == AuthorizationDetails.paymentType {
                for name in ["actions", "datatypes", "privileges", "identifier", "locations"] {
                    if let value = members[name] { rows.append((name, Self.plain(value))) }
                }
                continue
            }
            // An operator's type: every member, as the user approves all of it.
            rows.append((t("payment.also"), type))
            for (name, value) in members.sorted(by: { $0.key < $1.key }) where name != "type" {
                rows.append((name, Self.plain(value)))
            }
        }
        return .element(
            "dl", ["class": "summary"],
            rows.flatMap { name, value in
                [.element("dt", [:], [.text(name)]), .element("dd", ["dir": "auto"], [.text(value)])]
            })
    }

    /// A payment needs a verified email (as every bound approval does): the page says so, with the way back.
    private func unverified(_ c: Context, _ details: AuthorizationDetails) -> Response {
        cannotApprove(c, details, c.frame.text("add.ended.unverified"))
    }

    /// The payment, why it cannot be approved here, and the way back to the app.
    private func cannotApprove(_ c: Context, _ details: AuthorizationDetails, _ reason: String) -> Response {
        let t = c.frame.text
        var c = c
        c.frame.footer = t("footer.paying", ["client": c.client.name, "brand": brand])
        return HostedPage.response(
            HostedPage.layout(
                t("payment.title"), c.frame,
                [
                    statement(details, t), .element("p", ["class": "error", "role": "alert"], [.text(reason)]),
                    cancelForm(c),
                ]), c.frame, status: 409)
    }

    /// A detail's value as text: a string as it is, a list joined, anything else as compact JSON.
    static func plain(_ value: JSONValue) -> String {
        if let text = value.string { return text }
        if let list = value.strings { return list.joined(separator: ", ") }
        if case .object(let members) = value { return String(decoding: JSONValue.serialize(members), as: UTF8.self) }
        return String(String(decoding: JSONValue.serialize(["v": value]), as: UTF8.self).dropFirst(5).dropLast())
    }

    private func codeForm(_ c: Context, _ factor: HTML, error: String?, label: String, hint: String) -> HTML {
        HostedPage.form(
            "/authorize/payment", c.frame,
            [
                factor,
                HostedPage.field(
                    label, name: "code", error: error, hint: hint, autocomplete: "one-time-code",
                    inputmode: "numeric", autofocus: true, maxlength: 64),
                HostedPage.actions([HostedPage.button(c.frame.text("payment.approve"))]),
            ])
    }

    /// The flow's approval for factor `f`: the running one (its challenge sent again when `challenge`: a new text, a
    /// passkey's options), or a new one when there is none for this factor or it ended. Saved in the flow.
    private func approval(
        _ c: inout Context, _ f: SessionService.Hint, _ details: AuthorizationDetails, _ caller: Caller,
        _ audit: AuditContext, challenge: Bool
    ) throws -> AuthorizationService.Created? {
        let action = details.action(client: c.client.id)
        if let id = c.flow.progress.detailsAuthorization, c.flow.progress.detailsFactor == f.factorID.raw {
            guard challenge else { return nil }
            do {
                return try authorizations.resend(AuthorizationID(id), action: action, by: caller, client: audit)
            } catch AuthorizationFailure.notFound, AuthorizationFailure.mismatch {
                // Expired or ended: a new one below.
            }
        }
        let created = try authorizations.create(action, factorID: f.factorID, by: caller, client: audit)
        c.flow.progress.detailsAuthorization = created.id.raw
        c.flow.progress.detailsFactor = f.factorID.raw
        try flows.save(c.flow)
        return created
    }

    /// `POST /authorize/payment/send`: a text that names the payment (again: "Send a new code", whose purpose is
    /// the same approval, so the wrong codes counted so far still count).
    func paymentSend(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        let (caller, hints, details): (Caller, [SessionService.Hint], AuthorizationDetails)
        switch try approver(c, request) {
        case .failure(let answer): return answer.response
        case .success(let found): (caller, hints, details) = found
        }
        guard let f = hints.first(where: { $0.factorID.raw == form["factor"] }), [.phone, .device].contains(f.kind)
        else {
            return Self.seeOther("/authorize/payment", flow: c.flow.id)
        }
        let back = "&factor=\(f.factorID.raw)"
        let audit = Self.audit(request, for: c.client, c.frame.text)
        // The device approved meanwhile: nothing is sent, the payment goes on.
        if let response = try approvedOnDevice(&c, details, caller, request) { return response }
        if f.kind == .device, c.flow.progress.detailsPushFactor == f.factorID.raw, try devicePushState(c) == "pending" {
            // Sent already and still waiting (a second click, Back, another tab): the page waits for that one.
            return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: back)
        }
        do {
            if f.kind == .device {
                // Pushed: the page waits for the device. Not pushed: the user's devices had their pushes for now.
                let created = try devicePush(&c, f, details, caller, audit)
                return Self.seeOther(
                    "/authorize/payment", flow: c.flow.id,
                    extra: back + (created.pushed == nil ? "&error=pushes" : ""))
            }
            _ = try approval(&c, f, details, caller, audit, challenge: true)
        } catch let failure as SecondFactorFailure {
            return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: back + Self.errorQuery(failure))
        } catch CommonFailure.rateLimited(let wait) {
            return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: "\(back)&error=limit&wait=\(wait)")
        } catch AuthorizationFailure.unverifiedEmail {
            return unverified(c, details)
        }
        return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: "\(back)&sent=1")
    }

    /// `POST /authorize/payment`: the code or the passkey's assertion approves the payment; then the code goes to the
    /// client. A wrong code comes back to the page (Post/Redirect/Get); the last one ends the approval, and the page
    /// offers a new one.
    func paymentApproved(_ request: Request) throws -> Response {
        let form = Form(request.body)
        guard var c = try context(request, form: form) else { return lostFlow(request) }
        let caller: Caller
        let hints: [SessionService.Hint]
        let details: AuthorizationDetails
        switch try approver(c, request) {
        case .failure(let answer): return answer.response
        case .success(let found): (caller, hints, details) = found
        }
        // The device approved meanwhile: that approval stands, the code typed here is not needed.
        if let response = try approvedOnDevice(&c, details, caller, request) { return response }
        // A device answers on the device, never with a form here.
        guard let f = hints.first(where: { $0.factorID.raw == form["factor"] }), f.kind != .device else {
            let device = hints.first(where: { $0.factorID.raw == form["factor"] })
            return Self.seeOther(
                "/authorize/payment", flow: c.flow.id, extra: device.map { "&factor=\($0.factorID.raw)" } ?? "")
        }
        let back = "&factor=\(f.factorID.raw)&sent=1"
        guard let id = c.flow.progress.detailsAuthorization else {
            return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: "&factor=\(f.factorID.raw)")
        }
        let proof: Proof
        if f.kind == .passkey {
            guard let credential = Self.credential(form) else {
                return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: "\(back)&error=passkey")
            }
            proof = secondFactors.factors.passkey.proof(credential)
        } else {
            let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !code.isEmpty, code.count <= 64 else {
                return Self.seeOther(
                    "/authorize/payment", flow: c.flow.id, extra: "\(back)&error=\(code.isEmpty ? "empty" : "shape")")
            }
            proof = .code(TypedCode.normalize(code))
        }
        do {
            try authorizations.approve(
                AuthorizationID(id), proof: proof, by: caller,
                client: Self.audit(request, for: c.client, c.frame.text))
        } catch AuthorizationFailure.notFound, SecondFactorFailure.exhausted {
            // Expired, or its last wrong code ended it: a new approval starts from the page.
            c.flow.progress.detailsAuthorization = nil
            try flows.save(c.flow)
            return Self.seeOther(
                "/authorize/payment", flow: c.flow.id, extra: "&factor=\(f.factorID.raw)&error=ended")
        } catch let failure as SecondFactorFailure {
            return Self.seeOther(
                "/authorize/payment", flow: c.flow.id,
                extra: back + (f.kind == .passkey ? "&error=passkey" : Self.errorQuery(failure)))
        } catch CommonFailure.invalidFields {
            return Self.seeOther("/authorize/payment", flow: c.flow.id, extra: "\(back)&error=shape")
        }
        // One approval moves the payment: the device's, if one was asked meanwhile, ends.
        if let pushed = c.flow.progress.detailsPushAuthorization {
            try authorizations.withdraw(AuthorizationID(pushed), action: details.action(client: c.client.id))
            c.flow.progress.detailsPush = nil
        }
        c.flow.progress.detailsApproved = true
        return try advance(c, token: HostedCookies.value(cookies.session, in: request), request, unsaved: true)
    }
}
