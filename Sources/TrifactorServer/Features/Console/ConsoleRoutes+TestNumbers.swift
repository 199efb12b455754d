import Core
import Foundation
import HTTP
import WebUI

/// The console's test numbers: the list for every staff member; for the `write` role, adding a number with its fixed
/// code and removing an administrator's number, through `AdminService.setTestNumber` and `removeTestNumber` as the
/// admin API calls them, each audited with the staff member's reason.
extension ConsoleRoutes {
    /// The add form as it was sent, and what is wrong with it, by field id: `number`, `code`, `reason`, or
    /// `reason-<number>` for a row's removal.
    struct TestNumberForm {
        /// The number as typed, shown again in its field.
        var number = ""
        /// The code as typed, shown again in its field.
        var code = ""
        /// The sentence to show next to each field that is wrong, by the field's id.
        var errors: [String: String] = [:]
    }

    /// `GET /console/test-numbers`: numbers that never send and take a fixed code, and the form to add one.
    func testNumbersPage(_ request: Request, _ s: Staffed) throws -> Response {
        let done = request.query["done"].map {
            $0 == "added"
                ? "The test number is added: verifications to it send nothing and take its code."
                : "The test number is removed: it is a real number again."
        }
        return try testNumbersPage(request, s, notice: done, form: TestNumberForm())
    }

    /// The test numbers' page with `notice` above it and `form`'s errors next to their fields (then a 422, unless
    /// `status` says otherwise).
    func testNumbersPage(
        _ request: Request, _ s: Staffed, notice: String?, form: TestNumberForm, status: Int? = nil
    ) throws -> Response {
        let numbers = try admin.testNumbers(actor: .staff(s.caller.user.id, client: AuditContext(request)))
        return render(
            "Test numbers", s, notice: notice, status: status ?? (form.errors.isEmpty ? 200 : 422),
            [
                HostedPage.paragraph("Verifications to these numbers never send a message; their code is fixed."),
                ConsolePage.table(
                    "Test numbers", ["Number", "Source", "Added", "Remove"],
                    numbers.map { e in
                        [
                            .text("+" + e.number), .text(e.source), .text(Self.time(e.createdAt)),
                            removeControl(e, s, error: form.errors["reason-\(e.number)"]),
                        ]
                    }, empty: "There are no test numbers."),
                addTestNumberSection(s, form),
            ])
    }

    /// A row's removal: nothing for `read` or for the configuration's numbers, else a reason and a button.
    private func removeControl(_ e: TestNumberBook.Entry, _ s: Staffed, error: String?) -> HTML {
        guard e.source == "admin" else { return .text("Set in the configuration (TRIFACTOR_TEST_NUMBERS)") }
        guard s.canWrite, s.proven else { return .text("—") }
        return ConsolePage.form(
            "/console/test-numbers", csrf: s.csrf,
            [
                HostedPage.hidden("action", "remove"), HostedPage.hidden("number", e.number),
                HostedPage.field(
                    "Reason", name: "reason", error: error, hint: "Goes into the audit log", maxlength: 200,
                    id: "reason-\(e.number)"),
                HostedPage.button("Remove", kind: "danger"),
            ])
    }

    /// Adding a number: a sentence for `read`, "Confirm it's you" without a fresh proof, else the form.
    private func addTestNumberSection(_ s: Staffed, _ form: TestNumberForm) -> HTML {
        let here = "/console/test-numbers"
        guard s.canWrite else {
            return ConsolePage.section(
                "Add a test number", id: "add",
                [HostedPage.paragraph("Your staff role is read-only: you can see the test numbers, not change them.")])
        }
        guard s.proven else {
            return ConsolePage.section(
                "Add a test number", id: "add",
                [
                    HostedPage.paragraph(
                        "Changing test numbers needs your passkey or device key, used within the last 5 minutes."),
                    HostedPage.actions([
                        HostedPage.link("Confirm it's you", Self.confirmLink(here), class: "button primary")
                    ]),
                ])
        }
        return ConsolePage.section(
            "Add a test number", id: "add",
            [
                ConsolePage.form(
                    here, csrf: s.csrf,
                    [
                        HostedPage.hidden("action", "add"),
                        HostedPage.field(
                            "Phone number", name: "number", type: "tel", value: form.number,
                            error: form.errors["number"],
                            hint:
                                "With its country code, such as +44 7700 900123. Not a number a user's second factor uses.",
                            autocomplete: "off", inputmode: "tel"),
                        HostedPage.field(
                            "Code", name: "code", value: form.code, error: form.errors["code"],
                            hint:
                                "4 to 10 letters or digits: every verification to this number takes it. Adding a number again changes its code.",
                            autocomplete: "off", maxlength: 10),
                        HostedPage.field(
                            "Reason", name: "reason", error: form.errors["reason"],
                            hint: "Why you are doing this (up to 200 characters): it goes into the audit log.",
                            maxlength: 200),
                        HostedPage.button("Add test number"),
                    ])
            ])
    }

    /// A number as staff type it (`+44 7700-900 123`) as the admin API takes it: digits, no `+`. Anything else is
    /// left in, for `setTestNumber` to refuse.
    static func testNumberDigits(_ typed: String) -> String {
        var kept = typed.filter { !" -().\u{a0}".contains($0) }
        if kept.first == "+" { kept.removeFirst() }
        return kept
    }

    /// `POST /console/test-numbers`: adds (`action=add`, number, code) or removes (`action=remove`, number) a test
    /// number with a reason; answered by the list (Post/Redirect/Get), or the page again with the errors (422).
    func testNumberAction(_ request: Request) throws -> Response {
        let here = "/console/test-numbers"
        let (s, form): (Staffed, Form)
        switch try checkWrite(request, back: here) {
        case .answered(let page): return page
        case .allowed(let staffed, let sent): (s, form) = (staffed, sent)
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let actor = AdminService.Actor.staff(s.caller.user.id, client: AuditContext(request), reason: reason)
        let configured = "This number is set in the configuration (TRIFACTOR_TEST_NUMBERS): change it there."
        if form["action"] == "remove" {
            let number = form["number"] ?? ""
            if let problem = Self.reasonProblem(reason) {
                return try testNumbersPage(
                    request, s, notice: nil, form: TestNumberForm(errors: ["reason-\(number)": problem]))
            }
            do {
                try admin.removeTestNumber(number, actor: actor)
            } catch AdminFailure.testNumberNotFound {
                return try testNumbersPage(
                    request, s, notice: "There is no such test number: nothing was changed.", form: TestNumberForm(),
                    status: 404)
            } catch AdminFailure.testNumberConfigured {
                return try testNumbersPage(request, s, notice: configured, form: TestNumberForm(), status: 409)
            }
            return Response(status: 303, headers: [("Location", "\(here)?done=removed")])
        }
        var sent = TestNumberForm(
            number: form["number"] ?? "", code: (form["code"] ?? "").trimmingCharacters(in: .whitespaces))
        if let problem = Self.reasonProblem(reason) {
            sent.errors["reason"] = problem
            return try testNumbersPage(request, s, notice: nil, form: sent)
        }
        do {
            _ = try admin.setTestNumber(Self.testNumberDigits(sent.number), code: sent.code, actor: actor)
        } catch CommonFailure.invalidFields(let fields) {
            for field in fields {
                sent.errors[field.name] =
                    field.name == "code"
                    ? "Enter 4 to 10 letters or digits."
                    : "Enter a phone number with its country code: 7 to 15 digits, such as +44 7700 900123."
            }
        } catch AdminFailure.testNumberConfigured {
            sent.errors["number"] = configured
        } catch AdminFailure.testNumberEnrolled {
            sent.errors["number"] =
                "A user's second factor uses this number: as a test number it would never receive their codes."
        }
        guard sent.errors.isEmpty else {
            return try testNumbersPage(request, s, notice: "Nothing was changed: see the form below.", form: sent)
        }
        return Response(status: 303, headers: [("Location", "\(here)?done=added")])
    }
}
