import Core
import Foundation
import HTTP
import JOSE
import WebUI

extension TokenRoutes {
    /// The device grant's service, on the token endpoint's own dependencies.
    var devices: DeviceFlowService { DeviceFlowService(tokens: tokens) }

    /// `POST /device_authorization` (RFC 8628 §3.1, §3.2): the client authenticates as at the token endpoint (a
    /// public client by its `client_id`); the answer holds the device code, the user code and where to enter it.
    /// A refusal for a wrong client is audited as the token endpoint's are.
    func deviceAuthorization(_ request: Request, _ form: Form) throws -> Response {
        try auditingRefusals(request, form) {
            let client = try fapiAuthenticated(request, form)
            let issued = try devices.authorize(client: client, scope: form.raw("scope"), audit: AuditContext(request))
            return Self.json([
                "device_code": .string(issued.deviceCode), "user_code": .string(issued.userCode),
                "verification_uri": .string(issued.verificationURI),
                "verification_uri_complete": .string(issued.verificationURIComplete),
                "expires_in": .integer(Int64(issued.expiresIn)), "interval": .integer(Int64(issued.interval)),
            ])
        }
    }
}
