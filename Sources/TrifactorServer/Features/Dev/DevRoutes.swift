import API
import Core
import Foundation
import HTTP
import Messaging
import Store

/// Dev mode only (404 otherwise): `GET /dev/outbox[?to=ADDRESS]`, the
/// messages Trifactor sent or is sending, newest first; `GET /dev/phone`,
/// the demo's phone: SMS and voice messages per number, refreshing itself,
/// each call with a play button for `GET /dev/phone/calls/{id}.wav` (the
/// call spoken by espeak-ng);
/// and `GET /dev/passkey`, a page whose script drives passkey ceremonies.
struct DevRoutes {
    let transactions: Transactions
    /// The passkey page's script, read once at start-up.
    let passkeyScript: [UInt8]

    /// The routes, with the script read from the bundle.
    /// - Throws: `ResourceFailure` when the bundle lacks it.
    init(transactions: Transactions) throws {
        self.transactions = transactions
        guard let url = Bundle.module.url(forResource: "passkey", withExtension: "js"),
            let data = try? Data(contentsOf: url)
        else {
            throw ResourceFailure(
                description: "The resource passkey.js is missing from trifactord's bundle: reinstall it.")
        }
        passkeyScript = Array(data)
    }

    func register(on router: inout Router) {
        router.add("GET", "/dev/outbox") { request in
            let messages = try transactions.read {
                try Outbox.list(to: Self.recipient(request.query["to"]), limit: 100, on: $0)
            }
            return .json(
                OutboxListing(
                    messages: messages.map {
                        OutboxMessage(
                            id: $0.id.raw, channel: $0.channel.rawValue, to: $0.to, text: $0.text,
                            createdAt: Date(millis: $0.createdAt),
                            status: $0.status.rawValue)
                    }))
        }
        router.add("GET", "/dev/passkey", execution: .inline) { _ in
            .html(
                """
                <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Trifactor passkeys (dev)</title>
                <script src="/dev/passkey.js"></script></head>
                <body><h1>Trifactor passkeys</h1><p>window.trifactor.register(token, name), .secondFactor(email, password), .passwordless()</p></body></html>
                """)
        }
        let script = passkeyScript
        router.add("GET", "/dev/passkey.js", execution: .inline) { _ in
            Response(status: 200, headers: [("Content-Type", "text/javascript; charset=utf-8")], body: script)
        }
        router.add("GET", "/dev/phone") { request in
            let messages = try transactions.read {
                try Outbox.list(to: Self.recipient(request.query["to"]), limit: 200, on: $0)
            }
            .filter { $0.channel == .sms || $0.channel == .voice }
            var response = Response.html(DevPhonePage.render(messages))
            // The page's own inline style, and nothing else.
            response.headers.append(
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"))
            return response
        }
        router.add("GET", "/dev/phone/calls/:file") { request in try Self.spoken(request, transactions: transactions) }
    }

    /// A call of the outbox spoken, as a WAV; 404 for anything but a call whose text is still kept.
    static func spoken(_ request: Request, transactions: Transactions) throws -> Response {
        guard let file = request.parameters["file"], file.hasSuffix(".wav") else { throw HTTPProblem.notFound }
        let id = String(file.dropLast(4))
        guard let (text, locale) = try transactions.read({ try Outbox.voiceCall(id, on: $0) }), !text.isEmpty else {
            throw HTTPProblem.notFound
        }
        do throws(SpokenCall.Failure) {
            return Response(
                status: 200, headers: [("Content-Type", "audio/wav"), ("Cache-Control", "no-store")],
                body: try SpokenCall.wav(text, locale: locale))
        } catch .notInstalled {
            throw HTTPProblem(
                status: 503, code: .unavailable, title: "Service unavailable",
                detail: "Playing calls needs espeak-ng: apt-get install espeak-ng.")
        } catch {
            throw HTTPProblem(
                status: 503, code: .unavailable, title: "Service unavailable",
                detail: "espeak-ng could not speak this call.")
        }
    }

    /// An email normalised, or a phone number without its "+".
    static func recipient(_ raw: String?) -> String? {
        guard var r = raw?.trimmingCharacters(in: .whitespaces), !r.isEmpty else { return nil }
        if let email = EmailAddress(r) { return email.value }
        if r.hasPrefix("+") { r.removeFirst() }
        return r
    }
}

/// The HTML of `/dev/phone`: one card per number, messages newest first.
enum DevPhonePage {
    static func render(_ messages: [Outbox.Message]) -> String {
        var numbers: [String] = []
        var byNumber: [String: [Outbox.Message]] = [:]
        for m in messages {
            if byNumber[m.to] == nil { numbers.append(m.to) }
            byNumber[m.to, default: []].append(m)
        }
        var body = ""
        for number in numbers {
            body += "<section><h2>+\(escape(number))</h2>"
            for m in byNumber[number] ?? [] {
                let icon = m.channel == .voice ? "📞 call" : "💬 sms"
                body +=
                    "<article class=\"\(m.channel.rawValue)\"><header>\(icon) · \(escape(WireJSON.format(Date(millis: m.createdAt)))) · \(escape(m.status.rawValue))</header>"
                body += "<p>\(escape(m.text))</p>"
                if m.channel == .voice && !m.text.isEmpty {
                    // A new tab plays it: this page reloads every two seconds, which would cut an inline player short.
                    body +=
                        "<a class=\"play\" href=\"/dev/phone/calls/\(escape(m.id.raw)).wav\" target=\"_blank\" rel=\"noopener\">▶ Play the call</a>"
                }
                body += "</article>"
            }
            body += "</section>"
        }
        if numbers.isEmpty {
            body = "<p class=\"empty\">No SMS or calls yet. Start a phone verification and it shows up here.</p>"
        }
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="2">
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>Trifactor dev phone</title>
            <style>
            body{font-family:system-ui,sans-serif;background:#1d1f24;color:#eee;margin:0;padding:1rem;display:flex;flex-wrap:wrap;gap:1rem}
            h1{width:100%;font-size:1.2rem;margin:0}section{background:#fff;color:#222;border-radius:1.5rem;padding:1rem;width:20rem;box-shadow:0 0 0 .5rem #000}
            h2{font-size:1rem;text-align:center;margin:.2rem 0 1rem}article{border-radius:1rem;padding:.5rem .8rem;margin:.5rem 0}
            article.sms{background:#e5e5ea}article.voice{background:#dff5e1}header{font-size:.75rem;color:#666}p{margin:.3rem 0 0}
            .empty{color:#aaa}a.play{display:inline-block;margin-top:.4rem;padding:.3rem .8rem;border-radius:1rem;background:#1f7a3a;color:#fff;text-decoration:none;font-size:.85rem}
            </style></head><body><h1>Trifactor dev phone — SMS and calls, newest first</h1>\(body)</body></html>
            """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
