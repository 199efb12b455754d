import Core
import Foundation
import Synchronization
import Testing

@Suite("Password policy (NIST SP 800-63B)")
struct PasswordPolicyTests {
    let policy = PasswordPolicy(blocklist: ["password", "letmein", "qwertyuiop"])

    @Test("8 to 256 characters are accepted, counted after NFKC normalisation")
    func length() {
        #expect(policy.violation("1234567", email: nil) == .tooShort)
        #expect(policy.violation("12345678", email: nil) == nil)
        #expect(policy.violation(String(repeating: "ab", count: 128), email: nil) == nil)
        #expect(policy.violation(String(repeating: "ab", count: 128) + "c", email: nil) == .tooLong)
        // "ﬁ" (one ligature character) becomes "fi" (two) under NFKC.
        #expect(PasswordPolicy.normalize("ﬁﬁﬁﬁ") == "fifififi")
        #expect(policy.violation("ﬁﬁﬁﬁ", email: nil) == nil)
    }

    @Test("any Unicode is accepted, and the same password typed differently normalises to the same bytes")
    func unicode() {
        #expect(policy.violation("Ünïcødé пароль 🔑", email: nil) == nil)
        let composed = "caf\u{E9} au lait"
        let decomposed = "cafe\u{301} au lait"
        #expect(Array(PasswordPolicy.normalize(composed).utf8) == Array(PasswordPolicy.normalize(decomposed).utf8))
    }

    @Test("common passwords are refused whatever their case, and so is the email")
    func blocklist() throws {
        #expect(policy.violation("LetMeIn1", email: nil) == nil)
        #expect(policy.violation("QWERTYUIOP", email: nil) == .common)
        let email = try #require(EmailAddress("Julia.Roberts@example.com"))
        #expect(policy.violation("julia.roberts", email: email) == .contextual)
        #expect(policy.violation("julia.roberts@example.com", email: email) == .contextual)
    }
}

@Suite("Lockout arithmetic")
struct LockoutPolicyTests {
    @Test("no lock for the first four failures, then 5 s doubling per failure, capped at 15 minutes")
    func schedule() {
        let p = LockoutPolicy()
        #expect((1...4).map { p.lockout(afterFailures: $0) } == [nil, nil, nil, nil])
        #expect((5...12).map { p.lockout(afterFailures: $0) } == [5, 10, 20, 40, 80, 160, 320, 640])
        #expect(p.lockout(afterFailures: 13) == 900)
        #expect(p.lockout(afterFailures: 10_000) == 900)
    }
}

@Suite("Session lifetimes")
struct SessionPolicyTests {
    let start = Date(timeIntervalSince1970: 1_000_000)

    @Test("a session ends at the idle timeout or the absolute lifetime, whichever is first")
    func expiry() {
        let p = SessionPolicy(idleTimeout: 1800, absoluteLifetime: 43200)
        #expect(p.expiry(created: start, lastSeen: start) == start.addingTimeInterval(1800))
        #expect(!p.isExpired(created: start, lastSeen: start, now: start.addingTimeInterval(1799)))
        #expect(p.isExpired(created: start, lastSeen: start, now: start.addingTimeInterval(1800)))
        let late = start.addingTimeInterval(43000)
        #expect(p.expiry(created: start, lastSeen: late) == start.addingTimeInterval(43200))
    }

    @Test("a use is written back at most once per thirtieth of the idle timeout")
    func coalescing() {
        let p = SessionPolicy(idleTimeout: 1800, absoluteLifetime: 43200)
        #expect(!p.shouldRecordUse(lastSeen: start, now: start.addingTimeInterval(59)))
        #expect(p.shouldRecordUse(lastSeen: start, now: start.addingTimeInterval(60)))
    }
}

@Suite("Email addresses")
struct EmailAddressTests {
    @Test("addresses are trimmed and their domain lower-cased; the local part keeps its case")
    func normalise() {
        #expect(EmailAddress("  Ann.Lee@Example.COM\n")?.value == "Ann.Lee@example.com")
    }

    @Test(
        "implausible addresses are refused",
        arguments: [
            "", "plain", "@example.com", "a@", "a@b", "a b@example.com", "a@@example.com",
            "a@-example.com", ".a@example.com", "a..b@example.com", "a@example.123",
            String(repeating: "a", count: 65) + "@example.com",
        ])
    func refuse(_ raw: String) {
        #expect(EmailAddress(raw) == nil)
    }
}

@Suite("Randomness and encodings")
struct RandomTests {
    @Test("codes are decimal digits of the asked length, and every digit occurs")
    func digits() {
        let source = RandomSource { n in (0..<n).map { _ in UInt8.random(in: 0...255) } }
        let code = source.digits(6)
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        let many = (0..<200).map { _ in source.digits(6) }.joined()
        #expect(Set(many).count == 10)
    }

    @Test("uniform draws reject the biased top of the range")
    func rejection() {
        // 0xFFFFFFFF lies in the biased tail for an upper bound of 10 and must be redrawn.
        let queue = Mutex<[[UInt8]]>([[0xff, 0xff, 0xff, 0xff], [7, 0, 0, 0]])
        let source = RandomSource { _ in queue.withLock { $0.removeFirst() } }
        #expect(source.uniform(10) == 7)
    }

    @Test("base64url round-trips without padding and refuses other alphabets")
    func base64url() {
        let bytes: [UInt8] = [0xfb, 0xff, 0xfe, 0x00, 0x10]
        #expect(Base64URL.encode(bytes) == "-__-ABA")
        #expect(Base64URL.decode("-__-ABA") == bytes)
        #expect(Base64URL.decode("+//+ABA=") == nil)
    }

    @Test("base64url encodes RFC 4648's test vectors, and every length agrees with Foundation's base64")
    func base64urlVectors() {
        // RFC 4648 §10, without padding.
        let vectors = [
            "": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors { #expect(Base64URL.encode(Array(plain.utf8)) == encoded) }
        var bytes: [UInt8] = []
        for n in 0..<70 {
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected)
            #expect(Base64URL.decode(expected) == bytes)
            // Padded as standard base64 pads it (WebAuthn clients send that), it decodes the same.
            let padded = expected + String(repeating: "=", count: (4 - expected.count % 4) % 4)
            #expect(Base64URL.decode(padded) == bytes)
            bytes.append(UInt8(truncatingIfNeeded: n &* 37 &+ 251))
        }
    }

    @Test(
        "base64url refuses a character outside its alphabet, padding that is not at the end or too long, and a lone 6 bits"
    )
    func base64urlRefusals() {
        for text in [
            "Zm9v Yg", "Zm9v\nYg", "Zm9vYg==\u{0}", "Zm=9v", "Zg===", "Z", "Zm9vY", "Zm9vYg=", "é", "Zm9v+g", "Zm9v/g",
        ] {
            #expect(Base64URL.decode(text) == nil, "\(text.debugDescription)")
        }
        #expect(Base64URL.decode("Zg==") == Array("f".utf8))
        #expect(Base64URL.decode("") == [])
    }
}

@Suite("Base32")
struct Base32Tests {
    @Test("RFC 4648 §10 vectors encode without padding and decode with or without it")
    func vectors() {
        let cases = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in cases {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base32.decode("mzxw 6ytb oi======") == Array("foobar".utf8))
        #expect(Base32.decode("MZXW1") == nil)
    }
}

@Suite("Typed codes")
struct TypedCodeTests {
    @Test(
        "spaces of any kind, dashes and hyphens go; full-width digits and any script's digits fold; letters stay; the wrong shape is nil"
    )
    func normalise() {
        #expect(TypedCode.normalize("123 456") == "123456")
        #expect(TypedCode.normalize(" 1234\u{00A0}5678\n") == "12345678")
        #expect(TypedCode.normalize("ABCDE–12345") == "ABCDE12345")  // an en dash
        #expect(TypedCode.normalize("１２３４５６") == "123456")
        #expect(TypedCode.digits("4820 1937", count: 8) == "48201937")
        #expect(TypedCode.digits("4820193", count: 8) == nil)
        #expect(TypedCode.digits("4820l937", count: 8) == nil)
        #expect(TypedCode.digits("٤٨٢٠١٩٣٧", count: 8) == "48201937", "Arabic-Indic digits")
        #expect(TypedCode.digits("۴۸۲۰ ۱۹۳۷", count: 8) == "48201937", "Persian digits")
        #expect(TypedCode.digits("४८२०१९३७", count: 8) == "48201937", "Devanagari digits")
    }
}

@Suite("Device names")
struct DeviceNameTests {
    @Test("the common browsers and systems read as people say them, the look-alikes told apart")
    func common() {
        let cases: [(String?, String)] = [
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
                "Chrome on Linux"
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
                "Edge on Windows"
            ),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
                "Safari on iPhone"
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
                "Safari on macOS"
            ),
            (
                "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
                "Chrome on Android"
            ),
            ("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox on Linux"),
            (
                "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0 Mobile/15E148 Safari/604.1",
                "Chrome on iPhone"
            ),
            (
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
                "Opera on Windows"
            ),
            ("trifactor CLI (Linux; laptop)", "trifactor command line on Linux"),
            ("curl/8.5.0", "curl"),
            (nil, "Unknown browser"),
            ("something else", "Unknown browser"),
        ]
        for (agent, name) in cases {
            #expect(DeviceName.describe(userAgent: agent) == name, "\(agent ?? "nil")")
        }
    }
}
