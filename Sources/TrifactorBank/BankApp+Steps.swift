import Foundation
import HTTP
import TrifactorKit
import WebUI

/// Where the customer is: every step's page is a GET that renders the state
/// the session keeps, and a step opened out of turn (by its URL, by Back, in
/// a second tab) goes to the step the customer is at instead. A form posted
/// from such a page does nothing, and the page it lands on says so.
extension BankApp {
    /// The notice of a form posted from a page that was no longer current.
    static let outOfDate =
        "That page was out of date (perhaps it changed in another tab), so nothing was done. Here is where you are now."

    /// The page of the step this browser is at.
    func currentStep(_ session: BankSession?) -> String {
        guard let session else { return "/" }
        switch session.stage {
        case .start:
            if let reset = liveReset(session) { return resetStep(reset) }
            guard let opening = session.flows({ $0.opening }) else { return "/" }
            return opening.emailVerified ? "/open/phone" : "/open/verify"
        case .password:
            return "/signin/password"
        case .secondFactor:
            if session.passwordless != nil { return "/signin/device" }
            if session.push != nil { return "/signin/push" }
            if let code = session.code, code.hint.kind != .passkey { return "/signin/code" }
            return "/signin/factor"
        case .signedIn:
            if session.needsFactor {
                return session.flows({ $0.phoneSetup }) == nil ? "/setup/phone" : "/setup/phone/code"
            }
            if session.isAway(now: now(), idle: configuration.idleTimeout) {
                return session.code == nil ? "/confirm" : "/confirm/code"
            }
            return "/accounts"
        }
    }

    /// The answer to a page or form that does not fit the session's step: the current step's page (a form's saying that
    /// nothing was done).
    func outOfStep(_ session: BankSession?, _ request: Request) -> Response {
        let step = currentStep(session)
        if request.method == "POST" { session?.flash(Self.outOfDate) }
        guard step != request.path else { return refused(409, Self.outOfDate) }
        return redirect(step)
    }
}

/// Pages for paths the bank has no page at (404) or that take another method
/// (405, with `Allow`): HTML like every other page, never the HTTP layer's
/// JSON. Catch-all routes, added last, match any path of up to eight segments.
extension BankApp {
    /// Adds the catch-all routes, after every other: each answers with `noSuchPage`.
    func addFallbacks(_ router: inout Router) {
        let known = router.table.map { (method: $0.method, segments: $0.pattern.split(separator: "/")) }
        let handler: @Sendable (Request) throws -> Response = { [self] request in noSuchPage(request, known: known) }
        for depth in 0...8 {
            let pattern = depth == 0 ? "/" : "/" + (1...depth).map { ":part\($0)" }.joined(separator: "/")
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] where !(depth == 0 && method == "GET") {
                router.add(method, pattern, handler)
            }
        }
    }

    /// Any path no route of the bank takes: 405 with `Allow` when the path is one of `known`'s with another method, else 404.
    func noSuchPage(_ request: Request, known: [(method: String, segments: [Substring])]) -> Response {
        let parts = request.path.split(separator: "/")
        let allowed = Set(known.filter { Self.matches($0.segments, parts) }.map(\.method))
        let viewer = self.session(request).session
        let home = viewer?.isSignedIn == true ? ("Go to your accounts", "/accounts") : ("Go to the start", "/")
        if !allowed.isEmpty {
            let methods = (allowed.contains("GET") ? allowed.union(["HEAD"]) : allowed).sorted()
            var response = page(
                Page.layout(
                    "This page does not take that", Screen(devPhone: configuration.devPhone),
                    [
                        Page.paragraph("This page cannot be used that way. Nothing was done."),
                        Page.link(home.0, home.1, class: "button primary"),
                    ]), status: 405)
            response.headers.append(("Allow", methods.joined(separator: ", ")))
            return response
        }
        return page(
            Page.layout(
                "There is no such page", Screen(devPhone: configuration.devPhone),
                [
                    Page.paragraph("The address may be mistyped, or the page has moved."),
                    Page.link(home.0, home.1, class: "button primary"),
                ]), status: 404)
    }

    /// Whether a route's pattern (literal segments and `:captures`) matches a path's segments.
    static func matches(_ pattern: [Substring], _ parts: [Substring]) -> Bool {
        pattern.count == parts.count && zip(pattern, parts).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
    }
}
