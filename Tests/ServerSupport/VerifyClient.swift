import API
import Foundation
import Store
import TrifactorServer

/// Calls the phone verification API of a `TestServer` with an API key.
package struct VerifyClient {
    package let server: TestServer
    package let apiKey: String
    package let secret: String

    package init(_ server: TestServer, name: String = "tests") throws {
        self.server = server
        let (key, secret) = try server.database.transaction { try server.services.keys.create(name: name, on: $0) }
        apiKey = key.apiKey
        self.secret = secret
    }

    package var authorization: String { "Basic " + Data("\(apiKey):\(secret)".utf8).base64EncodedString() }

    package func call(_ method: String, _ path: String, _ body: [String: Any]? = nil, authorization: String? = nil)
        throws -> HTTPTestClient.Response
    {
        var headers = ["Authorization": authorization ?? self.authorization]
        var bytes: [UInt8] = []
        if let body {
            headers["Content-Type"] = "application/json"
            bytes = Array(try JSONSerialization.data(withJSONObject: body))
        }
        return try server.send(method, path, headers: headers, body: bytes)
    }

    /// Starts a verification; returns the response.
    package func start(_ to: String, channels: [String] = ["sms"], codeLength: Int = 6, extra: [String: Any] = [:])
        throws -> HTTPTestClient.Response
    {
        var body: [String: Any] = [
            "brand": "Acme", "code_length": codeLength, "workflow": channels.map { ["channel": $0, "to": to] },
        ]
        body.merge(extra) { $1 }
        return try call("POST", "/v2/verify", body)
    }

    /// Waits until the sender has been handed `count` messages in all (a
    /// message still pending when its request ends is voided, never sent).
    package func delivered(_ count: Int) -> Bool {
        server.tick()
        return server.sender.sent.count >= count
    }

    /// Starts and returns the request id (the start must succeed).
    package func started(_ to: String, channels: [String] = ["sms"], extra: [String: Any] = [:]) throws -> String {
        let r = try start(to, channels: channels, extra: extra)
        guard r.status == 202 else {
            throw HTTPTestClient.Failure(description: "start answered \(r.status): \(r.text)")
        }
        return try r.decode(VerificationStarted.self).requestID
    }

    package func check(_ id: String, _ code: String) throws -> HTTPTestClient.Response {
        try call("POST", "/v2/verify/\(id)", ["code": code])
    }

    /// The code in the newest SMS to `to`.
    package func smsCode(to: String) throws -> String? {
        let sms = try server.outbox(to: to).first { $0.channel == "sms" }
        guard let text = sms?.text, let r = text.range(of: #"\d{4,10}"#, options: .regularExpression) else {
            return nil
        }
        return String(text[r])
    }

    /// Messages to `to` as (channel, text, status), newest first.
    package func messages(to: String) throws -> [(channel: String, text: String, status: String)] {
        try server.outbox(to: to).map { ($0.channel, $0.text, $0.status) }
    }
}

/// Waits up to `seconds` for `condition`.
package func eventually(_ seconds: Double = 3, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        usleep(20_000)
    }
    return try condition()
}
