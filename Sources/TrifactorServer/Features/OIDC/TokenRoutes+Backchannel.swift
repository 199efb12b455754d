import Core
import Foundation
import HTTP
import JOSE
import WebUI

extension TokenRoutes {
    /// `POST /bc-authorize` (CIBA Core §7): the client authenticates as at `/token`; the answer is `auth_req_id`,
    /// `expires_in` and `interval` (§7.3), and `binding_number`, the number the user picks on their device (this
    /// server's number matching: the client shows or reads it to the user). Errors in §13's JSON form.
    func backchannelAuthorize(_ request: Request, _ form: Form) throws -> Response {
        try auditingRefusals(request, form) {
            let client = try fapiAuthenticated(request, form)
            let started = try backchannel.start(form.fields, client: client, audit: AuditContext(request))
            return Self.json([
                "auth_req_id": .string(started.authReqID), "expires_in": .integer(Int64(started.expiresIn)),
                "interval": .integer(Int64(started.interval)), "binding_number": .integer(Int64(started.number)),
            ])
        }
    }
}
