import API
import HTTP
import Sitekeys

/// `GET` and `PUT /v1/account/sitekey`: the signed-in user's sitekey. (The pictures are page assets: the hosted pages
/// serve them at `/sitekeys/NAME.svg`, beside their stylesheet.)
struct SitekeyRoutes {
    let sitekeys: SitekeyService

    func register(on routes: inout APIRoutes) {
        routes.authenticated("GET", "/v1/account/sitekey") { _, caller in
            guard let sitekey = try sitekeys.sitekey(caller) else { throw APIError.sitekeyNotSet }
            return .json(SitekeyBody(picture: sitekey.picture, phrase: sitekey.phrase))
        }
        routes.authenticated("PUT", "/v1/account/sitekey") { request, caller in
            let body = try request.decode(SitekeyBody.self)
            let sitekey = try sitekeys.set(
                caller, picture: body.picture, phrase: body.phrase, client: AuditContext(request))
            return .json(SitekeyBody(picture: sitekey.picture, phrase: sitekey.phrase))
        }
    }

}
