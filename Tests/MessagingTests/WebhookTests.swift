import Foundation
import Messaging
import Testing

@Suite("Webhook signatures and addresses")
struct WebhookTests {
    @Test("a signature matches the Standard Webhooks libraries' known answer")
    func knownAnswer() {
        // The vector of the Standard Webhooks reference libraries (checked with the `standardwebhooks` package).
        let header = WebhookSignature.header(
            id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: Data(#"{"test": 2432232314}"#.utf8),
            secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        #expect(header == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test("during a rotation both secrets sign, newest first, separated by a space; a malformed secret signs nothing")
    func rotation() {
        let body = Data("{}".utf8)
        let new = WebhookSignature.newSecret([UInt8](repeating: 7, count: 24))
        let old = WebhookSignature.newSecret([UInt8](repeating: 9, count: 24))
        let both = WebhookSignature.header(id: "msg_1", timestamp: 5, body: body, secrets: [new, old, "not-a-secret"])
        let parts = both.split(separator: " ").map(String.init)
        #expect(parts.count == 2)
        #expect(parts[0] == WebhookSignature.header(id: "msg_1", timestamp: 5, body: body, secrets: [new]))
        #expect(parts[1] == WebhookSignature.header(id: "msg_1", timestamp: 5, body: body, secrets: [old]))
        #expect(new.hasPrefix("whsec_") && !new.contains("="))
    }

    @Test("loopback, private, CGNAT, link-local, metadata and unique-local addresses are restricted; public ones not")
    func restricted() {
        for address in [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.169.254",
            "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fd00::1", "fc00::1", "fe80::1",
            "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "fd00:ec2::254", "not an address",
        ] {
            #expect(WebhookAddress.isRestricted(address), "\(address) should be restricted")
        }
        for address in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111"] {
            #expect(!WebhookAddress.isRestricted(address), "\(address) should be allowed")
        }
    }

    @Test("an endpoint on loopback or a private network is refused unless allowed, and http only to loopback")
    func targets() throws {
        let strict = WebhookSender()
        #expect(strict.refusal(of: URL(string: "https://127.0.0.1/hook")!) != nil)
        #expect(strict.refusal(of: URL(string: "https://169.254.169.254/latest/meta-data")!) != nil)
        #expect(strict.refusal(of: URL(string: "https://[::1]:8443/hook")!) != nil)
        #expect(strict.refusal(of: URL(string: "https://localhost/hook")!) != nil)
        #expect(strict.refusal(of: URL(string: "http://93.184.216.34/hook")!) != nil)
        #expect(strict.refusal(of: URL(string: "ftp://93.184.216.34/hook")!) != nil)
        #expect(strict.refusal(of: URL(string: "https://93.184.216.34/hook")!) == nil)
        let open = WebhookSender(allowPrivate: true)
        #expect(open.refusal(of: URL(string: "http://127.0.0.1:8080/hook")!) == nil)
        #expect(open.refusal(of: URL(string: "http://10.0.0.5/hook")!) != nil, "http only to loopback")
        #expect(open.refusal(of: URL(string: "https://10.0.0.5/hook")!) == nil)
    }
}
