import API
import Core
package import Crypto
import Foundation

/// A signed-in user of a `TestServer`, for the second-factor tests.
package struct MFAClient {
    package let server: TestServer
    package let email: String
    package let password = "correct horse battery"
    package var token: String

    /// Signs up, verifies the email and signs in (AAL1).
    package init(_ server: TestServer, email: String, verify: Bool = true) throws {
        self.server = server
        self.email = email
        guard let token = try server.signUp(email, password: password, verify: verify) else {
            throw HTTPTestClient.Failure(description: "no session")
        }
        self.token = token
    }

    package func call(_ method: String, _ path: String, _ body: [String: Any]? = nil, token: String? = nil) throws
        -> HTTPTestClient.Response
    {
        var headers: [String: String] = [:]
        if let t = token ?? Optional(self.token), !t.isEmpty { headers["Authorization"] = "Bearer \(t)" }
        var bytes: [UInt8] = []
        if let body {
            headers["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        return try server.send(method, path, headers: headers, body: bytes)
    }

    /// The TOTP code of `secret` (base32) at the server's time plus `offset` steps.
    package func totp(_ secret: String, offset: Int = 0, digits: Int = 6, algorithm: HMAC.Algorithm = .sha1) -> String {
        let step = OneTimePassword.step(unixTime: server.clock.clock.now().timeIntervalSince1970, period: 30)
        return OneTimePassword.hotp(
            secret: Base32.decode(secret) ?? [], counter: UInt64(Int64(step) + Int64(offset)), digits: digits,
            algorithm: algorithm)
    }

    /// Enrolls an authenticator app; returns (enrollment id, base32 secret). Uses the current step.
    package func enrollTOTP(name: String = "Phone app") throws -> (id: String, secret: String) {
        let begin = try call("POST", "/v1/mfa/enrollments", ["kind": "totp"])
        guard begin.status == 202 else {
            throw HTTPTestClient.Failure(description: "enroll totp: \(begin.status) \(begin.text)")
        }
        let started = try begin.decode(EnrollmentStarted.self)
        guard let secret = started.secret else { throw HTTPTestClient.Failure(description: "enroll totp: no secret") }
        let done = try call(
            "POST", "/v1/mfa/enrollments/\(started.enrollmentSession)", ["code": totp(secret), "display_name": name])
        guard done.status == 201 else { throw HTTPTestClient.Failure(description: "finish totp: \(done.text)") }
        return (try done.decode(EnrolledFactor.self).enrollmentID, secret)
    }

    /// Proves the authenticator app on this session (step-up) in the next
    /// time step, so later enrollments see a fresh second factor.
    package func stepUp(_ factor: (id: String, secret: String)) throws {
        server.clock.advance(30)
        let r = try call("POST", "/v1/session/step-up", ["enrollment_id": factor.id, "code": totp(factor.secret)])
        guard r.status == 200 else { throw HTTPTestClient.Failure(description: "step-up: \(r.status) \(r.text)") }
    }

    /// Enrolls a phone; returns its enrollment id.
    package func enrollPhone(_ phone: String = "+447400123456") throws -> String {
        let begin = try call("POST", "/v1/mfa/enrollments", ["kind": "phone", "phone": phone])
        guard begin.status == 202 else {
            throw HTTPTestClient.Failure(description: "enroll phone: \(begin.status) \(begin.text)")
        }
        let session = try begin.decode(EnrollmentStarted.self).enrollmentSession
        guard let code = try lastSMSCode(phone) else { throw HTTPTestClient.Failure(description: "no SMS") }
        let done = try call("POST", "/v1/mfa/enrollments/\(session)", ["code": code])
        guard done.status == 201 else { throw HTTPTestClient.Failure(description: "finish phone: \(done.text)") }
        return try done.decode(EnrolledFactor.self).enrollmentID
    }

    /// The 6-digit code of the newest SMS to `phone`.
    package func lastSMSCode(_ phone: String) throws -> String? {
        guard let text = try lastSMS(phone), let r = text.range(of: #"\d{6}"#, options: .regularExpression) else {
            return nil
        }
        return String(text[r])
    }

    /// The newest SMS text to `phone`.
    package func lastSMS(_ phone: String) throws -> String? {
        try server.outbox(to: phone.filter(\.isNumber)).first { $0.channel == "sms" }?.text
    }

    /// Signs in with the password; returns the answer.
    package func passwordSignIn() throws -> HTTPTestClient.Response {
        try server.json("POST", "/v1/sessions", ["email": email, "password": password])
    }
}
