import Core
import Crypto
import Foundation
import HTTP
import WebUI

extension HostedRoutes {
    /// Whose second factor the page asks for: a password sign-in waiting for it, or a session stepping up.
    enum SecondStep {
        case signIn(pending: String)
        case stepUp(Caller)
    }

    /// The second step of this browser, with the user's factors (the chosen one first).
    func secondStep(_ c: Context, _ request: Request) throws -> (SecondStep, [SessionService.Hint])? {
        if let pending = HostedCookies.value(cookies.pending, in: request) {
            do {
                return (.signIn(pending: pending), try secondFactors.hints(pendingCredential: pending))
            } catch SecondFactorFailure.invalidPendingCredential {
                // An expired or spent sign-in: fall through to the session, if any.
            }
        }
        guard
            let (caller, _) = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
        else { return nil }
        return (.stepUp(caller), try secondFactors.hints(caller.user.id))
    }

    /// The factors the hosted pages can ask for here: every one at sign-in (a device's approval included), every
    /// one but the device at step-up (its push answers sign-ins only), and only those that reach the level the
    /// client asked for (a code never reaches the hardware-key level, so it is not offered for it).
    static func usable(_ hints: [SessionService.Hint], stepUp: Bool, level: ACR? = nil) -> [SessionService.Hint] {
        hints.filter { hint in
            if stepUp && hint.kind == .device { return false }
            if level == .hardwareKey { return hint.kind == .passkey || hint.kind == .device }
            return true
        }
    }

    /// `GET /authorize/second-factor[?factor=ID][&sent=1][&approval=ID&number=N]`.
    func secondFactorPage(_ request: Request) throws -> Response {
        guard let c = try context(request) else { return lostFlow(request) }
        if HostedPage.isWaitPoll(request) {
            // The waiting page's script asks whether anything changed: answered before anything else and without
            // doing anything (the reload it makes then signs in), so a session or a code is never issued to a request
            // that drops the answer.
            guard let approval = request.query["approval"],
                let pending = HostedCookies.value(cookies.pending, in: request),
                (try? secondFactors.push.state(ApprovalID(approval), pendingCredential: pending)) == "pending"
            else { return Response(status: 200) }
            return .noContent
        }
        guard let (step, hints) = try secondStep(c, request) else {
            return Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&expired=1")
        }
        let isStepUp = if case .stepUp = step { true } else { false }
        if isStepUp {
            // Back or a reload after the second step was done: the session is already strong enough, so the flow
            // goes on where it is instead of asking for a proof it does not need.
            let session = try flows.session(
                token: HostedCookies.value(cookies.session, in: request), client: AuditContext(request))
            if case .stepUp = try flows.next(c.flow, client: c.client, session: session?.1) {
            } else {
                return try advance(c, token: HostedCookies.value(cookies.session, in: request), request)
            }
        }
        let usable = Self.usable(hints, stepUp: isStepUp, level: c.flow.request.requestedLevel)
        guard let chosen = usable.first(where: { $0.factorID.raw == request.query["factor"] }) ?? usable.first else {
            // Nothing here reaches the hardware-key level (a device approves sign-ins only): say so to the client
            // rather than offer an authenticator app that cannot reach it either.
            if c.flow.request.requestedLevel == .hardwareKey && !hints.isEmpty {
                return try refuse(
                    c, "unmet_authentication_requirements", "The user has no passkey that can be used here.")
            }
            return Self.seeOther("/authorize/add-factor", flow: c.flow.id)
        }
        if let approval = request.query["approval"], case .signIn(let pending) = step, chosen.kind == .device {
            return try awaitApproval(c, request, pending: pending, factor: chosen, approval: approval)
        }
        let t = c.frame.text
        var error = Self.errorSentence(request.query, t)
        if chosen.kind == .totp, request.query["error"] == "wrong", let sentence = error {
            error = t("code.totp_once", ["error": sentence])
        }
        if chosen.kind == .passkey {
            return passkeyPage(c, step, chosen, others: usable, request: request, error: error)
        }
        let phone = chosen.maskedPhone ?? t("common.your_phone")
        let notice: String? =
            if request.query["added"] == "1" {
                t("second.notice.added")
            } else if request.query["called"] == "1" {
                t("second.notice.called", ["phone": phone])
            } else if request.query["resent"] == "1" && request.query["error"] == nil && chosen.kind == .phone {
                // Only a second text makes the first one stop working; the first is said by the page itself.
                t("second.notice.sent", ["phone": phone])
            } else {
                nil
            }
        let sent = request.query["sent"] == "1" || request.query["resent"] == "1"
        return factorForm(
            c, chosen, others: usable, stepUp: isStepUp, sent: sent, error: error,
            status: error == nil ? 200 : 422, notice: notice,
            sendRefused: request.query["error"] != nil && !sent)
    }

    /// The passkey's page of a second step or step-up.
    func passkeyPage(
        _ c: Context, _ step: SecondStep, _ f: SessionService.Hint, others: [SessionService.Hint], request: Request,
        error: String?, status: Int = 200
    ) -> Response {
        let isStepUp = if case .stepUp = step { true } else { false }
        var frame = c.frame
        frame.script = true
        var c = c
        c.frame = frame
        var body: [HTML] = []
        if let error { body.append(.element("p", ["class": "error", "role": "alert"], [.text(error)])) }
        body += [passkeyStep(c, step, f, request: request), otherWays(c, chosen: f, among: others), cancelForm(c)]
        let t = frame.text
        let notice = isStepUp ? t("second.passkey.step_up", ["client": c.client.name]) : nil
        return HostedPage.response(
            HostedPage.layout(isStepUp ? t("second.step_up.title") : t("second.title"), frame, notice: notice, body),
            frame, status: status)
    }

    /// The page of one factor: its code field (or the button that sends it), and the other ways one click away.
    func factorForm(
        _ c: Context, _ f: SessionService.Hint, others: [SessionService.Hint], stepUp: Bool, sent: Bool, error: String?,
        status: Int = 200, notice: String? = nil, sendRefused: Bool = false
    ) -> Response {
        var body: [HTML] = []
        let t = c.frame.text
        let phone = f.maskedPhone ?? t("common.your_phone")
        let factor = HostedPage.hidden("factor", f.factorID.raw)
        let codeField = { (label: String, hint: String) in
            HostedPage.form(
                "/authorize/second-factor", c.frame,
                [
                    factor,
                    HostedPage.field(
                        label, name: "code", error: error, hint: hint, autocomplete: "one-time-code",
                        inputmode: f.kind == .recoveryCode ? nil : "numeric", autofocus: true, maxlength: 64),
                    HostedPage.actions([HostedPage.button(stepUp ? t("second.confirm") : t("common.sign_in"))]),
                ])
        }
        switch f.kind {
        case .totp:
            body.append(codeField(t("code.totp.label"), t("code.totp.hint")))
        case .recoveryCode:
            body.append(codeField(t("code.recovery.label"), t("code.recovery.hint")))
        case .phone where sent || (error != nil && !sendRefused):
            body.append(HostedPage.paragraph(t("code.sms.sent", ["phone": phone])))
            body.append(codeField(t("code.sms.label"), t("code.sms.hint")))
            body.append(
                HostedPage.form(
                    "/authorize/second-factor/send", c.frame,
                    [
                        factor, HostedPage.hidden("again", "1"),
                        HostedPage.actions([
                            HostedPage.button(t("code.send_new"), name: "how", value: "sms", kind: "secondary"),
                            HostedPage.button(t("code.call"), name: "how", value: "call", kind: "secondary"),
                        ]),
                    ]))
        case .phone:
            body.append(
                HostedPage.form(
                    "/authorize/second-factor/send", c.frame,
                    [
                        factor,
                        HostedPage.paragraph(t("code.sms.will_send", ["phone": phone])),
                        HostedPage.actions([
                            HostedPage.button(t("code.text_me"), name: "how", value: "sms"),
                            HostedPage.button(t("code.call"), name: "how", value: "call", kind: "secondary"),
                        ]),
                    ]))
        case .device:
            body.append(
                HostedPage.form(
                    "/authorize/second-factor/send", c.frame,
                    [
                        factor,
                        HostedPage.paragraph(
                            t("device.will_ask", ["device": HostedPage.device(f.displayName, t)])),
                        HostedPage.actions([HostedPage.button(t("device.send"), name: "how", value: "push")]),
                    ]))
        default:
            break
        }
        // A refused send (a limit) sent nothing: its sentence stands above the button, not under a code field.
        if let error, f.kind == .device || (f.kind == .phone && sendRefused && !sent) {
            body.insert(.element("p", ["class": "error", "role": "alert"], [.text(error)]), at: 0)
        }
        body.append(otherWays(c, chosen: f, among: others))
        body.append(cancelForm(c))
        let title = stepUp ? t("second.step_up.title") : t("second.title")
        let notice = notice ?? (stepUp ? t("second.step_up.notice", ["client": c.client.name]) : nil)
        return HostedPage.response(HostedPage.layout(title, c.frame, notice: notice, body), c.frame, status: status)
    }

    /// "Use another way": a link to each other factor.
    func otherWays(
        _ c: Context, chosen: SessionService.Hint, among all: [SessionService.Hint],
        path: String = "/authorize/second-factor"
    ) -> HTML {
        let others = all.filter { $0.factorID != chosen.factorID }
        guard !others.isEmpty else { return .empty }
        return .element(
            "section", ["aria-labelledby": "other-ways"],
            [
                .element("h2", ["id": "other-ways"], [.text(c.frame.text("second.other_ways"))]),
                .element(
                    "ul", ["class": "factors"],
                    others.map { f in
                        .element(
                            "li", [:],
                            [
                                HostedPage.link(
                                    Self.label(f, c.frame.text),
                                    "\(path)?flow=\(c.flow.id)&factor=\(f.factorID.raw)")
                            ])
                    }),
            ])
    }

    static func label(_ f: SessionService.Hint, _ t: HostedText) -> String {
        switch f.kind {
        case .totp: f.displayName.map { t("factor.totp.named", ["name": $0]) } ?? t("factor.totp")
        case .phone: t("factor.phone", ["phone": f.maskedPhone ?? t("common.your_phone")])
        case .recoveryCode: t("factor.recovery")
        case .device: t("factor.device", ["device": HostedPage.device(f.displayName, t)])
        case .passkey: f.displayName.map { t("factor.passkey.named", ["name": $0]) } ?? t("factor.passkey")
        }
    }

    /// What a POST of the second step names: its flow, whose second step it is, and the factor (one the page
    /// could offer); or the answer when one of them is missing.
    enum Posted {
        case factor(Context, SecondStep, SessionService.Hint)
        case answer(Response)
    }

    func posted(_ request: Request, _ form: Form) throws -> Posted {
        guard let c = try context(request, form: form) else { return .answer(lostFlow(request)) }
        guard let (step, hints) = try secondStep(c, request) else {
            return .answer(Self.seeOther("/authorize/sign-in", flow: c.flow.id, extra: "&expired=1"))
        }
        let isStepUp = if case .stepUp = step { true } else { false }
        let usable = Self.usable(hints, stepUp: isStepUp, level: c.flow.request.requestedLevel)
        guard let f = usable.first(where: { $0.factorID.raw == form["factor"] }) else {
            return .answer(Self.seeOther("/authorize/second-factor", flow: c.flow.id))
        }
        return .factor(c, step, f)
    }

    /// `POST /authorize/second-factor/send`: text, call, or push.
    func sendCode(_ request: Request) throws -> Response {
        let form = Form(request.body)
        let posted = try posted(request, form)
        guard case .factor(let c, let step, let f) = posted else {
            if case .answer(let answer) = posted { return answer }
            return lostFlow(request)
        }
        let audit = Self.audit(request, for: c.client, c.frame.text)
        // "Send a new code" (a code was sent already): a refusal keeps its page, with the field for the code sent.
        let back = "&factor=\(f.factorID.raw)" + (form["again"] == "1" ? "&sent=1" : "")
        do {
            switch (step, form["how"]) {
            case (.signIn(let pending), "call"):
                // "Call me instead" before any text: send one, then call at once.
                _ = try? secondFactors.signInChallenge(pendingCredential: pending, factorID: f.factorID, client: audit)
                try secondFactors.callInstead(pendingCredential: pending, factorID: f.factorID, client: audit)
            case (.signIn(let pending), _):
                let (_, push) = try secondFactors.signInChallenge(
                    pendingCredential: pending, factorID: f.factorID, client: audit)
                if let push {
                    return Self.seeOther(
                        "/authorize/second-factor", flow: c.flow.id,
                        extra: "\(back)&approval=\(push.id.raw)&number=\(push.number)")
                }
            case (.stepUp(let caller), _):
                _ = try secondFactors.stepUpChallenge(caller, factorID: f.factorID, client: audit)
            }
        } catch let failure as SecondFactorFailure {
            return Self.seeOther("/authorize/second-factor", flow: c.flow.id, extra: back + Self.errorQuery(failure))
        } catch CommonFailure.rateLimited(let wait) {
            return Self.seeOther("/authorize/second-factor", flow: c.flow.id, extra: "\(back)&error=limit&wait=\(wait)")
        }
        let called = form["how"] == "call" ? "&called=1" : ""
        let resent = form["again"] == "1" ? "&resent=1" : "&sent=1"
        return Self.seeOther(
            "/authorize/second-factor", flow: c.flow.id, extra: "&factor=\(f.factorID.raw)\(resent)\(called)")
    }

    /// `POST /authorize/second-factor`: a code (authenticator app, text, recovery code).
    func codeSubmitted(_ request: Request) throws -> Response {
        let form = Form(request.body)
        let posted = try posted(request, form)
        guard case .factor(var c, let step, let f) = posted else {
            if case .answer(let answer) = posted { return answer }
            return lostFlow(request)
        }
        let proof: Proof
        if f.kind == .passkey {
            guard let credential = Self.credential(form) else {
                return Self.seeOther(
                    "/authorize/second-factor", flow: c.flow.id, extra: "&factor=\(f.factorID.raw)&error=passkey")
            }
            proof = secondFactors.factors.passkey.proof(credential)
        } else {
            // A typed code is taken as people type it: spaces or dashes between groups, full-width digits.
            let code = (form["code"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !code.isEmpty, code.count <= 64 else {
                return Self.seeOther(
                    "/authorize/second-factor", flow: c.flow.id,
                    extra: "&factor=\(f.factorID.raw)&sent=1&error=\(code.isEmpty ? "empty" : "shape")")
            }
            proof = .code(TypedCode.normalize(code))
        }
        let audit = Self.audit(request, for: c.client, c.frame.text)
        do {
            switch step {
            case .signIn(let pending):
                let issued = try secondFactors.completeSignIn(
                    pendingCredential: pending, factorID: f.factorID, answer: .proof(proof), client: audit)
                c.flow.progress.authenticatedHere = true
                c.flow.progress.accountChosen = true
                return try advance(
                    c, token: issued.token, request, unsaved: true,
                    headers: signedIn(request, token: issued.token, session: issued.session))
            case .stepUp(let caller):
                // Only when the flow asks for a step-up; a second factor alone never stands for the password that
                // prompt=login or max_age asks for (the step-up refreshes auth_time, nothing more).
                let token = HostedCookies.value(cookies.session, in: request)
                let session = try flows.session(token: token, client: AuditContext(request))
                guard case .stepUp = try flows.next(c.flow, client: c.client, session: session?.1) else {
                    return try advance(c, token: token, request)
                }
                _ = try secondFactors.stepUp(caller, factorID: f.factorID, proof: proof, client: audit)
                return try advance(c, token: token, request)
            }
        } catch SecondFactorFailure.invalidPendingCredential {
            return Self.seeOther(
                "/authorize/sign-in", flow: c.flow.id, extra: "&expired=1", headers: [cookies.clear(cookies.pending)])
        } catch SecondFactorFailure.exhausted {
            return Self.seeOther(
                "/authorize/sign-in", flow: c.flow.id, extra: "&stopped=1", headers: [cookies.clear(cookies.pending)])
        } catch let failure as SecondFactorFailure {
            return Self.seeOther(
                "/authorize/second-factor", flow: c.flow.id,
                extra: "&factor=\(f.factorID.raw)&sent=1"
                    + (f.kind == .passkey ? "&error=passkey" : Self.errorQuery(failure)))
        } catch CommonFailure.invalidFields {
            return Self.seeOther(
                "/authorize/second-factor", flow: c.flow.id, extra: "&factor=\(f.factorID.raw)&sent=1&error=shape")
        }
    }

}

extension HostedRoutes {
    /// Who made the request, with the client's name as the brand its texts and calls bear (when it can be one: 1
    /// to 18 letters, digits, spaces and `&'.-`; otherwise the server's own name). A self-registered client's name
    /// is anyone's choice, so its texts bear the server's name: a stranger's app never sends texts as a bank.
    /// The texts and calls a page starts speak the page's language.
    static func audit(_ request: Request, for client: OIDCClient, _ t: HostedText) -> AuditContext {
        var audit = AuditContext(request)
        audit.brand = client.registeredBy == .dynamic ? nil : AuditContext.brand(client.name)
        audit.language = t.language
        return audit
    }
}

extension SecondFactorService {
    /// The factors of the user whose password sign-in waits on `pendingCredential`.
    /// - Throws: `SecondFactorFailure.invalidPendingCredential` when it is unknown, spent or expired.
    func hints(pendingCredential: String) throws -> [SessionService.Hint] {
        guard SessionToken.isWellFormed(pendingCredential) else { throw SecondFactorFailure.invalidPendingCredential }
        let now = clock.now().millis
        return try transactions.read { db in
            try hints(Self.passwordPending(pendingCredential, now: now, on: db).userID, on: db)
        }
    }

    /// The user's factors.
    func hints(_ userID: UserID) throws -> [SessionService.Hint] { try transactions.read { try hints(userID, on: $0) } }
}
