import Foundation
import Glibc
import HTTP
import ServerTestSupport
import Synchronization
import Testing
import TrifactorKit
import TrifactorKitVault
import TrifactorServer
import TrifactorTestSupport

/// Sign in with Trifactor end to end: trifactord as the OpenID Provider on a loopback port (its issuer is its own
/// address), a public client registered through RFC 7591, a user signing in through the hosted pages, and the SDK
/// with the loopback redirect of `trifactor login --browser`.
@Suite("Sign in with Trifactor against trifactord")
struct SDKSignInWithTrifactorTests {
    @Test("a user signs in through the hosted pages; the SDK exchanges the code, verifies the ID token and refreshes")
    func hostedSignIn() async throws {
        // The issuer must be the server's address, which is known only once it listens: take a free port first.
        let port = try Self.freePort()
        let configuration = TestServer.configuration {
            $0.oidc = true
            $0.publicURL = URL(string: "http://127.0.0.1:\(port)")
            $0.http.port = port
            $0.registration = .open
        }
        try await Backend.all[0].withLiveServer(configuration) { server in
            let issuer = "http://127.0.0.1:\(server.port)"
            _ = try server.signUp("oidc-sdk@example.com")
            let registered = try server.json(
                "POST", "/register",
                [
                    "client_name": "trifactor CLI", "redirect_uris": ["http://127.0.0.1/callback"],
                    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"],
                ])
            let clientID = try #require(try registered.wireObject()["client_id"] as? String, "\(registered.text)")
            let browser = HostedBrowser(port: server.port, email: "oidc-sdk@example.com")
            let loopback = try LoopbackRedirect(timeout: 30) { url in browser.start(url) }
            let signIn = SignInWithTrifactor(
                issuer: URL(string: issuer)!, clientID: clientID, redirectURI: loopback.redirectURI,
                scopes: ["openid", "email"], crypto: OpenSSLTokenCrypto(), clock: ServerClock(clock: server.clock))
            let tokens: SignInWithTrifactor.Tokens
            do {
                tokens = try await signIn.signIn(using: loopback)
            } catch {
                Issue.record("sign-in failed: \(error); the browser saw: \(browser.failure ?? "nothing wrong")")
                return
            }
            #expect(browser.failure == nil)
            #expect(tokens.idToken.issuer == issuer)
            #expect(tokens.idToken.audiences.contains(clientID))
            #expect(tokens.idToken.level == .password)
            #expect(tokens.idToken.methods.contains("pwd"))
            #expect(tokens.idToken.sessionID != nil)
            let refresh = try #require(tokens.refreshToken)
            let refreshed = try await signIn.refresh(tokens)
            #expect(refreshed.refreshToken != nil && refreshed.refreshToken != refresh)
            #expect(refreshed.idToken.subject == tokens.idToken.subject)
        }
    }

    /// A port no one listens on now (the server binds it right after; a race lost here fails loudly at start-up).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw HTTPTestClient.Failure(description: "no free port (errno \(errno))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A browser for the hosted pages, on its own thread: follows 303s, keeps cookies, posts each page's form with its
/// hidden fields (flow, csrf) and the user's answers, and at the end follows the redirect to the loopback listener.
final class HostedBrowser: Sendable {
    let port: Int
    let email: String
    private let problem = Mutex<String?>(nil)

    init(port: Int, email: String) {
        self.port = port
        self.email = email
    }

    /// What went wrong, if anything.
    var failure: String? { problem.withLock { $0 } }

    func start(_ url: URL) {
        Thread.detachNewThread {
            do { try self.run(url) } catch { self.problem.withLock { $0 = "\(error)" } }
        }
    }

    private func run(_ start: URL) throws {
        var cookies: [String: String] = [:]
        var target = start.absoluteString.replacingOccurrences(of: "http://127.0.0.1:\(port)", with: "")
        var method = "GET"
        var body: [UInt8] = []
        var trail: [String] = []
        for _ in 0..<20 {
            trail.append("\(method) \(target.prefix(60))")
            var headers: [String: String] = [:]  // HTTPTestClient sends Host itself
            if !cookies.isEmpty { headers["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
            if method == "POST" { headers["Content-Type"] = "application/x-www-form-urlencoded" }
            let response = try Self.exchange(port: port, method, target, headers: headers, body: body)
            for line in response.cookies {
                let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2 { cookies[pair[0]] = pair[1] }
            }
            if response.status == 303, let location = response.header("location") {
                if location.hasPrefix("http://") {
                    // The redirect to the app: the loopback listener.
                    let url = URL(string: location)!
                    let answer = try Self.exchange(port: url.port!, "GET", url.path + "?" + (url.query ?? ""))
                    guard answer.text.contains("You can close this tab") else {
                        throw HTTPTestClient.Failure(description: "the loopback answered \(answer.status)")
                    }
                    return
                }
                (method, target, body) = ("GET", location, [])
                continue
            }
            guard response.status == 200 else {
                throw HTTPTestClient.Failure(description: "\(target) answered \(response.status): \(response.text)")
            }
            let page = response.text
            var fields = Self.hiddenFields(page)
            let action: String
            if page.contains("name=\"password\"") {
                action = "/authorize/password"
                fields["password"] = "correct horse battery"
            } else if page.contains("name=\"email\"") {
                action = "/authorize/sign-in"
                fields["email"] = email
            } else if page.contains("name=\"decision\"") {
                action = "/authorize/consent"
                fields["decision"] = "allow"
            } else {
                throw HTTPTestClient.Failure(description: "an unexpected page at \(target): \(page)")
            }
            method = "POST"
            target = action
            body = Array(
                fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
                    .joined(separator: "&").utf8)
        }
        throw HTTPTestClient.Failure(description: "the hosted pages never sent the browser back: \(trail)")
    }

    struct Response {
        var status = 0
        var headers: [String: String] = [:]
        /// Every `Set-Cookie` (a dictionary of headers keeps one).
        var cookies: [String] = []
        var text = ""
        func header(_ name: String) -> String? { headers[name] }
    }

    /// One request on a connection of its own, read to its end (`Connection: close`).
    static func exchange(
        port: Int, _ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []
    )
        throws -> Response
    {
        let client = try HTTPTestClient(port: port)
        var fields = headers
        fields["Connection"] = "close"
        try client.send(
            HTTPTestClient.head(method, target, headers: fields, contentLength: method == "GET" ? nil : body.count)
                + body)
        guard let raw = client.readToEnd() else {
            throw HTTPTestClient.Failure(description: "\(target) kept the connection open")
        }
        let text = String(decoding: raw, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else {
            throw HTTPTestClient.Failure(description: "no answer from \(target)")
        }
        var response = Response(text: String(text[split.upperBound...]))
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        response.status = Int(lines[0].split(separator: " ")[1]) ?? 0
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "set-cookie" { response.cookies.append(value) } else { response.headers[name] = value }
        }
        return response
    }

    /// The hidden inputs of `page` (the first form's flow and csrf).
    static func hiddenFields(_ page: String) -> [String: String] {
        var fields: [String: String] = [:]
        for input in page.components(separatedBy: "<input").dropFirst() {
            let tag = input.prefix { $0 != ">" }
            guard tag.contains("type=\"hidden\""), let name = attribute("name", in: tag),
                let value = attribute("value", in: tag), fields[name] == nil
            else { continue }
            fields[name] = value
        }
        return fields
    }

    static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let start = tag.range(of: " \(name)=\"") else { return nil }
        return String(tag[start.upperBound...].prefix { $0 != "\"" })
    }
}
