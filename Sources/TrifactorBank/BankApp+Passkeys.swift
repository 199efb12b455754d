import API
import Foundation
import HTTP
import TrifactorKit

/// Passkeys at the bank ("Use Touch ID / Face ID / your security key"): add
/// one in settings, use it as the second factor, or sign in with it alone.
/// The browser runs the WebAuthn ceremony (passkey.js); these JSON
/// endpoints pass options and credentials to and from trifactord.
extension BankApp {
    struct CredentialBody: Decodable { let credential: CredentialJSON; let name: String? }
    struct AssertionBody: Decodable { let assertion: CredentialJSON }
    struct FactorBody: Decodable { let factor: String? }
    struct Next: Encodable { let redirect: String }
    struct CreationBody: Encodable { let options: CreationOptions }
    struct RequestBody: Encodable { let options: RequestOptions }

    func addPasskeys(_ router: inout Router) {
        route(&router, "POST", "/settings/passkey/options") { [self] request in
            let (session, _) = try postedJSON(request)
            guard case .signedIn = session.stage else { return jsonError(401, "Sign in first.") }
            let client = trifactor(session, request)
            do {
                let started = try blocking({ try await client.beginPasskeyEnrollment(name: "Passkey") })
                session.set(passkeyEnrollment: started.session)
                return Response.json(CreationBody(options: started.options))
            } catch let error as TrifactorError where [.secondFactorRequired, .reauthenticationRequired].contains(error.problem?.code) {
                session.set(returnPath: "/settings")
                session.flash("Confirm it's you first: adding a passkey needs a fresh second factor.")
                return Response.json(Next(redirect: "/confirm"))
            } catch {
                return jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
        }
        route(&router, "POST", "/settings/passkey") { [self] request in
            let (session, _) = try postedJSON(request)
            guard case .signedIn = session.stage, let enrollment = session.passkeyEnrollment,
                  let body = try? WireJSON.sharedDecoder.decode(CredentialBody.self, from: Data(request.body)) else {
                return jsonError(400, "That passkey could not be read. Try again.")
            }
            let client = trifactor(session, request)
            do {
                _ = try blocking({ try await client.finishPasskeyEnrollment(enrollment, credential: body.credential, name: "Passkey") })
            } catch {
                return jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
            session.set(passkeyEnrollment: nil)
            session.flash("Your passkey is added: next time, sign in with Touch ID, Face ID or your security key.")
            return Response.json(Next(redirect: "/settings"))
        }
        route(&router, "POST", "/signin/passkey/options") { [self] request in
            let (session, _) = try postedJSON(request)
            let wanted = (try? WireJSON.sharedDecoder.decode(FactorBody.self, from: Data(request.body)))?.factor
            guard case .secondFactor = session.stage, let resolver = session.resolver,
                  let hint = resolver.hints.first(where: { $0.id == wanted && $0.kind == .passkey }) else {
                return jsonError(409, "This sign-in is over. Start again.")
            }
            do {
                guard case .passkey(let options) = try blocking({ try await resolver.challenge(hint) }) else {
                    return jsonError(409, "That is not a passkey.")
                }
                session.set(codeHint: hint)
                return Response.json(RequestBody(options: options))
            } catch {
                return jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
        }
        route(&router, "POST", "/signin/passkey") { [self] request in
            let (session, _) = try postedJSON(request)
            guard case .secondFactor(let email) = session.stage, let resolver = session.resolver, let hint = session.codeHint, hint.kind == .passkey,
                  let body = try? WireJSON.sharedDecoder.decode(AssertionBody.self, from: Data(request.body)) else {
                return jsonError(409, "This sign-in is over. Start again.")
            }
            do {
                _ = try blocking({ try await resolver.resolve(hint, with: .assertion(body.assertion)) })
            } catch {
                return jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
            return try jsonRedirect(finishSignIn(session, email: email, request: request, next: "/accounts"))
        }
        route(&router, "POST", "/signin/passkeyless/options") { [self] request in
            // The sign-in page may be a visitor's: the session starts here, keeping the page's token for the next call.
            let (session, cookies) = startSession(try postedBeforeSession(request, json: true).viewer)
            let client = trifactor(session, request)
            var answer: Response
            do {
                answer = Response.json(RequestBody(options: try blocking({ try await client.passkeySignInOptions() })))
            } catch {
                answer = jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
            for cookie in cookies { answer.headers.append(("Set-Cookie", cookie)) }
            return answer
        }
        route(&router, "POST", "/signin/passkeyless") { [self] request in
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
                return jsonError((error as? TrifactorError)?.problem?.status ?? 500, Self.sentence(error))
            }
            return try jsonRedirect(finishSignIn(session, email: email, request: request, next: "/accounts"))
        }
    }

    /// A redirect answer turned into the JSON the passkey script follows, keeping its cookies.
    func jsonRedirect(_ response: Response) -> Response {
        var answer = Response.json(Next(redirect: response.header("Location") ?? "/"))
        answer.headers += response.headers.filter { $0.name == "Set-Cookie" }
        return answer
    }
}
