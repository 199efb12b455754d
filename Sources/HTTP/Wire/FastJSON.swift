import API
import Foundation
import Logging

/// A wire model with a hand-written encoding for the hot path.

package protocol FastJSONEncodable {
    /// The JSON text, identical to `WireJSON.encoder()`'s.
    var fastJSON: String { get }
}

extension JSONWriter {
    /// A date as the wire writes it (ISO 8601, `WireJSON.format`).
    mutating func field(_ k: String, _ v: Date) {
        field(k, WireJSON.format(v))
    }
}

extension SessionInfo: FastJSONEncodable {
    package var fastJSON: String {
        JSONWriter.object { w in
            w.field("aal", aal)
            w.field("created_at", createdAt)
            w.field("expires_at", expiresAt)
            w.field("id", id)
            w.field("methods", methods)
        }
    }
}

extension UserInfo: FastJSONEncodable {
    package var fastJSON: String {
        JSONWriter.object { w in
            w.field("created_at", createdAt)
            w.field("display_name", displayName)
            w.field("email", email)
            w.field("email_verified", emailVerified)
            w.field("id", id)
            w.field("locale", locale)
        }
    }
}

extension CurrentSession: FastJSONEncodable {
    package var fastJSON: String {
        JSONWriter.object { w in
            w.field("session", object: session.fastJSON)
            w.field("user", object: user.fastJSON)
        }
    }
}

extension HealthStatus: FastJSONEncodable {
    package var fastJSON: String {
        JSONWriter.object { w in
            w.field("status", status)
            if let version { w.field("version", version) }
        }
    }
}
