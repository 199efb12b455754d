import API
import Foundation

extension TrifactorClient {
    // MARK: Sitekey

    /// The signed-in user's sitekey: the picture and phrase Trifactor's hosted sign-in shows above the password, on a
    /// browser that was signed in with a second factor, so the user knows the page is genuine.
    ///
    /// - Returns: the sitekey, or nil when the user has chosen none.
    /// - Throws: `TrifactorError.notSignedIn` without a session; `TrifactorError.server` `unauthenticated` when the
    ///   session ended, `second_factor_required` when the user has a second factor and this session did not pass it.
    public func sitekey() async throws(TrifactorError) -> SitekeyBody? {
        do {
            return try await authorized { token throws(TrifactorError) in
                try await connection.call("GET", "/v1/account/sitekey", token: token, as: SitekeyBody.self)
            }
        } catch let error where error.problem?.code == .notFound {
            return nil
        }
    }

    /// Chooses the signed-in user's sitekey, replacing any earlier one.
    ///
    /// - Parameters:
    ///   - picture: the name of one of the server's pictures (`anchor`, `owl`, …; each is served at
    ///     `/sitekeys/NAME.svg`).
    ///   - phrase: 3 to 40 letters, digits, spaces and `.,!?'-`, the user's own words; spaces around it are dropped.
    /// - Returns: the sitekey as stored.
    /// - Throws: `TrifactorError.server` `invalid_fields` naming `picture` or `phrase`, `second_factor_required` when
    ///   the user has a second factor and this session did not pass it; `TrifactorError.notSignedIn` without a
    ///   session.
    /// - Important: Trifactor shows the sitekey only on a browser recognised for the account, never to whoever types
    ///   the email; an app should not show it before a sign-in either.
    @discardableResult
    public func setSitekey(picture: String, phrase: String) async throws(TrifactorError) -> SitekeyBody {
        try await authorized { token throws(TrifactorError) in
            try await connection.call(
                "PUT", "/v1/account/sitekey", body: SitekeyBody(picture: picture, phrase: phrase), token: token)
        }
    }
}
