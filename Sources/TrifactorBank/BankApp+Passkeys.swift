import API
import Foundation
import HTTP
import TrifactorKit

/// Passkeys at the bank ("Use Touch ID / Face ID / your security key"): add
/// one in settings, use it as the second factor, to confirm it's you, or to
/// sign in alone. The browser runs the WebAuthn ceremony (passkey.js); these
/// JSON endpoints pass options and credentials to and from trifactord. A
/// refused passkey is said to be one, never "the email or password is incorrect".
extension BankApp {
    struct CredentialBody: Decodable {
        let credential: CredentialJSON
        let name: String?
    }
    struct AssertionBody: Decodable { let assertion: CredentialJSON }
    struct FactorBody: Decodable { let factor: String? }
    struct Next: Encodable { let redirect: String }
    struct CreationBody: Encodable { let options: CreationOptions }
    struct RequestBody: Encodable { let options: RequestOptions }

    /// What the page says when Trifactor refused a passkey's signature.
    static let passkeyRefused = "That passkey was not accepted. Try again, or use another way."

    /// The routes of passkeys (adding one, signing in, confirming it's the customer): each HTTP method and path, and the handler that answers it.
    func addPasskeys(_ router: inout Router) {
        route(&router, "POST", "/settings/passkey/options", passkeyEnrollmentOptions)
        route(&router, "POST", "/settings/passkey", enrollPasskey)
        route(&router, "POST", "/signin/passkey/options", signInPasskeyOptions)
        route(&router, "POST", "/signin/passkey", signInWithPasskey)
        route(&router, "POST", "/signin/passkeyless/options", passkeylessOptions)
        route(&router, "POST", "/signin/passkeyless", signInPasskeyless)
        route(&router, "POST", "/confirm/passkey/options", confirmPasskeyOptions)
        route(&router, "POST", "/confirm/passkey", confirmWithPasskey)
    }

    /// `POST /settings/passkey/options`: the creation options of a new passkey (or a redirect to confirm first).
    func passkeyEnrollmentOptions(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard session.isSignedIn else { return jsonError(401, "Sign in first.") }
        let client = trifactor(session, request)
        do {
            let started = try blocking({ try await client.beginPasskeyEnrollment(name: "Passkey") })
            session.flows { $0.passkeyEnrollment = started.session }
            return Response.json(CreationBody(options: started.options))
        } catch  where Self.wantsStepUp(error) {
            return jsonRedirect(stepUp(session, .addPasskey))
        } catch {
            return jsonRefusal(error)
        }
    }

    /// `POST /settings/passkey`: the browser's new passkey, added.
    func enrollPasskey(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard session.isSignedIn, let enrollment = session.flows({ $0.passkeyEnrollment }),
            let body = try? WireJSON.sharedDecoder.decode(CredentialBody.self, from: Data(request.body))
        else {
            return jsonError(400, "That passkey could not be read. Try again.")
        }
        let client = trifactor(session, request)
        do {
            _ = try blocking({
                try await client.finishPasskeyEnrollment(enrollment, credential: body.credential, name: "Passkey")
            })
        } catch {
            return jsonRefusal(error, saying: "Your browser's passkey was not accepted. Try again.")
        }
        session.flows { $0.passkeyEnrollment = nil }
        session.flash("Your passkey is added: next time, sign in with Touch ID, Face ID or your security key.")
        return Response.json(Next(redirect: "/settings"))
    }

    /// `POST /signin/passkey/options`: the request options of a passkey as the sign-in's second factor.
    func signInPasskeyOptions(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        let wanted = (try? WireJSON.sharedDecoder.decode(FactorBody.self, from: Data(request.body)))?.factor
        guard case .secondFactor = session.stage, let resolver = session.resolver,
            let hint = resolver.hints.first(where: { $0.id == wanted && $0.kind == .passkey })
        else {
            return jsonError(409, "This sign-in is over. Start again.")
        }
        return passkeyOptions(session, hint) { try blocking({ try await resolver.challenge(hint) }) }
    }

    /// `POST /signin/passkey`: a passkey's assertion as the sign-in's second factor.
    func signInWithPasskey(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard case .secondFactor(let email) = session.stage, let resolver = session.resolver,
            let hint = session.code?.hint, hint.kind == .passkey,
            let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body))
        else {
            return jsonError(409, "This sign-in is over. Start again.")
        }
        do {
            _ = try blocking({ try await resolver.resolve(hint, with: .assertion(body.assertion)) })
        } catch {
            return jsonRefusal(error, saying: Self.passkeyRefused)
        }
        return try jsonRedirect(finishSignIn(session, email: email, request: request, next: "/accounts"))
    }

    /// `POST /signin/passkeyless/options`: the request options of a sign-in with a passkey alone.
    func passkeylessOptions(_ request: Request) throws -> Response {
        // The sign-in page may be a visitor's: the session starts here, keeping the page's token for the next call.
        let (session, cookies) = startSession(try postedBeforeSession(request, json: true).viewer)
        let client = trifactor(session, request)
        var answer: Response
        do {
            answer = Response.json(RequestBody(options: try blocking({ try await client.passkeySignInOptions() })))
        } catch {
            answer = jsonRefusal(error)
        }
        for cookie in cookies { answer.headers.append(("Set-Cookie", cookie)) }
        return answer
    }

    /// `POST /signin/passkeyless`: a passkey's assertion signs the customer in alone.
    func signInPasskeyless(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body)) else {
            return jsonError(400, "That passkey could not be read. Try again.")
        }
        let client = trifactor(session, request)
        let email: String
        do {
            _ = try blocking({ try await client.signIn(withPasskey: body.assertion) })
            email = try blocking({ try await client.currentSession() }).user.email
        } catch {
            return jsonRefusal(error, saying: "That passkey was not accepted. Try again, or sign in with your email.")
        }
        return try jsonRedirect(finishSignIn(session, email: email, request: request, next: "/accounts"))
    }

    /// `POST /confirm/passkey/options`: the request options of a passkey that confirms it's the customer.
    func confirmPasskeyOptions(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        let wanted = (try? WireJSON.sharedDecoder.decode(FactorBody.self, from: Data(request.body)))?.factor
        guard session.isSignedIn,
            let hint = try confirmable(session, request).first(where: { $0.id == wanted && $0.kind == .passkey })
        else {
            return jsonError(409, "This page is out of date. Reload it.")
        }
        let client = trifactor(session, request)
        return passkeyOptions(session, hint) { try blocking({ try await client.stepUpChallenge(hint) }) }
    }

    /// `POST /confirm/passkey`: a passkey's assertion confirms it's the customer.
    func confirmWithPasskey(_ request: Request) throws -> Response {
        let (session, cookie) = try postedJSON(request)
        guard session.isSignedIn, let hint = session.code?.hint, hint.kind == .passkey,
            let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body))
        else {
            return jsonError(409, "This page is out of date. Reload it.")
        }
        let client = trifactor(session, request)
        do {
            _ = try blocking({ try await client.stepUp(hint, with: .assertion(body.assertion)) })
        } catch let error as TrifactorError where [.tooManyAttempts, .attemptsExhausted].contains(error.problem?.code) {
            return jsonRedirect(
                signOut(
                    session, cookie, request,
                    notice: "Too many tries. For your safety you are signed out: sign in again when you are ready."))
        } catch {
            return jsonRefusal(error, saying: Self.passkeyRefused)
        }
        return jsonRedirect(confirmed(session, request, cookie))
    }

    /// The passkey request options of `hint`'s `challenge` (a sign-in's or a step-up's), the passkey kept as the code
    /// under way for the assertion that follows.
    func passkeyOptions(_ session: BankSession, _ hint: FactorHint, _ challenge: () throws -> SecondFactorChallenge)
        -> Response
    {
        do {
            guard case .passkey(let options) = try challenge() else { return jsonError(409, "That is not a passkey.") }
            session.set(code: CodeChallenge(hint))
            return Response.json(RequestBody(options: options))
        } catch {
            return jsonRefusal(error)
        }
    }

    /// A refusal for the passkey script: `sentence` for a refused proof (a wrong code or credentials), else Trifactor's
    /// reason; the status is Trifactor's refusal (503 when it cannot be reached), never a 500.
    func jsonRefusal(_ error: any Error, saying sentence: String? = nil) -> Response {
        guard let error = error as? TrifactorError else { return jsonError(400, sentence ?? Self.sentence(error)) }
        if error.code == .transport { return jsonError(503, Self.sentence(error)) }
        let proofRefused = [.invalidCode, .invalidCredentials, .passkeyRefused].contains(error.problem?.code)
        let status = error.problem.map { $0.status < 500 ? $0.status : 502 } ?? 400
        return jsonError(status, proofRefused ? (sentence ?? Self.sentence(error)) : Self.sentence(error))
    }

    /// A redirect answer turned into the JSON the passkey script follows, keeping its cookies.
    func jsonRedirect(_ response: Response) -> Response {
        var answer = Response.json(Next(redirect: response.header("Location") ?? "/"))
        answer.headers += response.headers.filter { $0.name == "Set-Cookie" }
        return answer
    }
}
