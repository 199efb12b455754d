import Core
import Foundation
import JOSE

/// A client's metadata as JSON, with RFC 7591's names, both ways: the one
/// reading of a body into a `ClientService.Draft` (dynamic registration, its
/// management protocol and the admin API all call it), and a client as JSON
/// (never its secret's hash).
enum ClientMetadataJSON {
    /// Why a body is not client metadata.
    enum Refusal: Error, Equatable {
        /// Not JSON at all.
        case malformed
        /// JSON, but not one object, or larger than `maxBytes`.
        case notAnObject
        /// Members of the wrong type, or values this server does not take, each named.
        case invalidFields([FieldProblem])
    }

    /// The largest body read as metadata (a JWK Set included).
    static let maxBytes = 64 * 1024

    /// The metadata of a JSON body as a draft, for a client registered by
    /// `registrar`. A member that is `null` counts as left out, and members
    /// this server does not know are ignored (RFC 7591 §2). Only an operator
    /// (the host or an admin key) sets `client_id`, `first_party` and
    /// `profile_in_id_token`: a self-registered client's are ignored.
    /// - Throws: `Refusal`, with every member of the wrong type at once; the
    ///   values themselves are checked by `ClientService.validate`.
    static func draft(_ body: [UInt8], by registrar: OIDCClient.Registrar) throws(Refusal) -> ClientService.Draft {
        guard body.count <= maxBytes else { throw .notAnObject }
        let value: JSONValue
        do { value = try JSONDecoder().decode(JSONValue.self, from: Data(body)) } catch { throw .malformed }
        guard let object = value.object else { throw .notAnObject }
        var reader = Reader(object: object)
        var d = ClientService.Draft()
        if registrar != .dynamic {
            d.id = reader.string("client_id")
            d.firstParty = reader.bool("first_party") ?? false
            d.profileInIDToken = reader.bool("profile_in_id_token") ?? false
            // One-factor CIBA approvals by a texted link: the operator's choice, never a self-registered client's.
            d.cibaText = reader.bool("trifactor_ciba_text") ?? false
        }
        // Any client may hold itself to the FAPI 2.0 profile (it only makes it stricter).
        d.fapi2 = reader.bool("fapi2") ?? false
        d.dpopBound = reader.bool("dpop_bound_access_tokens") ?? false
        d.name = reader.string("client_name")
        d.authMethod = reader.string("token_endpoint_auth_method")
        d.redirectURIs = reader.strings("redirect_uris") ?? []
        d.postLogoutRedirectURIs = reader.strings("post_logout_redirect_uris") ?? []
        d.grantTypes = reader.strings("grant_types")
        d.scopes = reader.string("scope").map { $0.split(separator: " ").map(String.init) }
        d.logoURI = reader.string("logo_uri")
        d.backchannelLogoutURI = reader.string("backchannel_logout_uri")
        d.cibaMode = reader.string("backchannel_token_delivery_mode")
        d.cibaEndpoint = reader.string("backchannel_client_notification_endpoint")
        d.idTokenAlgorithm = reader.string("id_token_signed_response_alg")
        if let jwks = reader.member("jwks") {
            if let set = jwks.object {
                d.jwks = String(decoding: JSONValue.serialize(set), as: UTF8.self)
            } else {
                reader.refuse("jwks", "must be a JWK Set (an object with keys)")
            }
        }
        // The code flow is the only response type; a client without the code grant has none.
        let code = (d.grantTypes ?? ["authorization_code"]).contains("authorization_code")
        if let types = reader.strings("response_types"), types != ["code"], !(types.isEmpty && !code) {
            reader.refuse("response_types", code ? "must be [\"code\"]" : "must be [] without authorization_code")
        }
        if reader.member("jwks_uri") != nil { reader.refuse("jwks_uri", "is not supported: send jwks") }
        guard reader.problems.isEmpty else { throw .invalidFields(reader.problems) }
        return d
    }

    /// Reads typed members, noting each of the wrong type.
    private struct Reader {
        let object: [String: JSONValue]
        var problems: [FieldProblem] = []

        mutating func refuse(_ name: String, _ reason: String) {
            problems.append(FieldProblem(name: name, reason: reason))
        }

        func member(_ name: String) -> JSONValue? {
            guard let value = object[name], value != .null else { return nil }
            return value
        }

        mutating func string(_ name: String) -> String? {
            guard let value = member(name) else { return nil }
            guard let text = value.string else {
                refuse(name, "must be a string")
                return nil
            }
            return text
        }

        mutating func strings(_ name: String) -> [String]? {
            guard let value = member(name) else { return nil }
            guard let list = value.strings else {
                refuse(name, "must be an array of strings")
                return nil
            }
            return list
        }

        mutating func bool(_ name: String) -> Bool? {
            guard let value = member(name) else { return nil }
            guard case .bool(let flag) = value else {
                refuse(name, "must be true or false")
                return nil
            }
            return flag
        }
    }

    /// A client as JSON: RFC 7591's metadata names, and `first_party`,
    /// `profile_in_id_token` and `registered_by`; never its secret or the
    /// secret's hash.
    static func object(_ c: OIDCClient) -> [String: Any] {
        var o: [String: Any] = [
            "client_id": c.id, "client_name": c.name, "token_endpoint_auth_method": c.authMethod.rawValue,
            "redirect_uris": c.redirectURIs, "post_logout_redirect_uris": c.postLogoutRedirectURIs,
            "grant_types": c.grantTypes.map(\.rawValue),
            "response_types": c.grantTypes.contains(.authorizationCode) ? ["code"] : [],
            "scope": c.scopes.joined(separator: " "), "first_party": c.firstParty,
            "profile_in_id_token": c.profileInIDToken, "id_token_signed_response_alg": c.idTokenAlgorithm,
            "registered_by": c.registeredBy.rawValue, "fapi2": c.fapi2,
            // What is enforced: a FAPI 2.0 client's tokens are bound too.
            "dpop_bound_access_tokens": c.dpopBound || c.fapi2,
            "client_id_issued_at": c.createdAt / 1000,
        ]
        if let logo = c.logoURI { o["logo_uri"] = logo }
        if let uri = c.backchannelLogoutURI { o["backchannel_logout_uri"] = uri }
        if let mode = c.cibaMode { o["backchannel_token_delivery_mode"] = mode.rawValue }
        if let uri = c.cibaEndpoint { o["backchannel_client_notification_endpoint"] = uri }
        if c.cibaText { o["trifactor_ciba_text"] = true }
        if let jwks = c.jwks, let keys = try? JSONSerialization.jsonObject(with: Data(jwks.utf8)) { o["jwks"] = keys }
        return o
    }

    /// `object` as compact JSON with sorted keys and unescaped slashes.
    static func serialize(_ object: Any) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            .map(Array.init) ?? []
    }
}
