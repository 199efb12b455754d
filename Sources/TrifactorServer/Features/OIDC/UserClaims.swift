import Core
import Foundation
import JOSE
import Phone
import Store

/// The standard claims about a user (OIDC Core §5.1) that each scope
/// releases (§5.4): `profile` the name, `email` the address and whether it
/// was verified, `phone` the number of their phone factor (verified by
/// enrolling it). Nothing is released for a scope that was not granted.
enum UserClaims {
    static func claims(_ userID: String, scopes: [String], on db: any SQLConnection) throws -> [String: JSONValue] {
        guard let user = try AccountRepository.find(id: UserID(userID), on: db) else { return [:] }
        var out: [String: JSONValue] = [:]
        if scopes.contains("profile") {
            if let name = user.displayName { out["name"] = .string(name) }
            out["preferred_username"] = .string(user.email)
            if let locale = user.locale { out["locale"] = .string(locale) }
        }
        if scopes.contains("email") {
            out["email"] = .string(user.email)
            out["email_verified"] = .bool(user.emailVerifiedAt != nil)
        }
        if scopes.contains("phone"),
            let phone = try FactorRepository.list(user.id, on: db).lazy.compactMap(\.credential.phone).first
        {
            out["phone_number"] = .string(phone.e164)
            out["phone_number_verified"] = .bool(true)
        }
        return out
    }
}
