import API
import Core
import Crypto
import Foundation
import Glibc
import HTTP
import Messaging
import Store

/// The doctor's checks over the network: TLS, the public URL and the proxy in front, the running server's
/// limits, and delivery.
extension Doctor {
    // MARK: TLS, the public URL, limits, delivery

    mutating func tls() {
        guard let pem = configuration.http.tlsCertificatePEM else { return }
        let host = configuration.publicURL?.host
        guard let certificate = CertificateCheck(pem: pem, keyPEM: configuration.http.tlsKeyPEM, host: host) else {
            add(
                "tls", .error,
                "TRIFACTOR_TLS_CERT holds no certificate OpenSSL can read: give the PEM chain, the server's certificate first."
            )
            return
        }
        expiry(certificate.expires, of: "The certificate in TRIFACTOR_TLS_CERT", check: "tls")
        if certificate.keyMatches == false {
            add(
                "tls", .error,
                "TRIFACTOR_TLS_KEY is not (or does not hold) the key of TRIFACTOR_TLS_CERT's certificate: give the pair that belongs together."
            )
        }
        if let host, certificate.coversHost == false {
            add(
                "tls", .warning,
                "The certificate in TRIFACTOR_TLS_CERT does not name \(host), the public URL's host: clients that reach trifactord directly will refuse it (a proxy that terminates TLS in front is fine). Issue one for \(host) if they do."
            )
        }
    }

    mutating func expiry(_ expires: Date, of what: String, check: String) {
        let days = expires.timeIntervalSinceNow / 86_400
        let date = expires.formatted(.iso8601.year().month().day())
        if days < 0 {
            add(check, .error, "\(what) expired on \(date): renew it.")
        } else if days < 14 {
            add(check, .warning, "\(what) expires in \(Int(days)) day(s), on \(date): renew it now.")
        } else {
            add(check, .ok, "\(what) is valid until \(date).")
        }
    }

    mutating func publicURL(_ ring: KeyRing?) {
        guard let base = configuration.publicURL else {
            add(
                "public_url", .skipped,
                "TRIFACTOR_PUBLIC_URL is not set: the OpenID Provider, emails' links and delivery receipts need it.")
            return
        }
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        guard let ring, let ringKey = ring.entries.last?.key else {
            // Without the key only reachability can be checked.
            do throws(OutboundCheck.Failure) {
                let answer = try OutboundCheck.get(URL(string: root + "/ready")!)
                add(
                    "public_url", answer.status == 200 ? .warning : .error,
                    "\(root)/ready answers \(answer.status), but without the key file the doctor cannot tell whether this deployment answers there."
                )
            } catch {
                unreachable(root, error)
            }
            return
        }
        let key = DoctorProof.key(ringKey)
        let at = Int(now.timeIntervalSince1970)
        let nonce = Hex.encode(SecureRandom.bytes(16))
        let header =
            "\(DoctorProof.header): at=\(at);nonce=\(nonce);proof=\(DoctorProof.request(key: key, at: at, nonce: nonce))"
        let answer: OutboundCheck.Answer
        do throws(OutboundCheck.Failure) {
            answer = try OutboundCheck.get(
                URL(string: root + DoctorRoute.path)!,
                headers: [header, "X-Forwarded-For: \(DoctorCommand.forgedAddress)"])
        } catch {
            unreachable(root, error)
            return
        }
        if let expires = answer.certificateExpires {
            expiry(expires, of: "The certificate at \(root)", check: "public_tls")
        }
        if (300..<400).contains(answer.status) {
            add(
                "public_url", .error,
                "\(root) redirects (HTTP \(answer.status)) to \(answer.headers["location"] ?? "another address"): set TRIFACTOR_PUBLIC_URL to the address clients end up at, without a redirect."
            )
            return
        }
        guard answer.status == 200, let proof = answer.headers[DoctorProof.answerHeader.lowercased()],
            ConstantTime.equals(proof, DoctorProof.answer(key: key, nonce: nonce, body: Array(answer.body))),
            let echo = try? JSONDecoder().decode(DoctorEcho.self, from: answer.body)
        else {
            // A server more than the proof's window away in time refuses it too: say so rather than blame the URL.
            if let date = answer.headers["date"].flatMap(Self.httpDate),
                abs(date.timeIntervalSince(now)) > DoctorProof.window - 5
            {
                add(
                    "clock", .error,
                    String(
                        format:
                            "The server at %@ answers with a clock %+.0f s from this instance's: too far apart for the doctor's proof, and for codes and expiries. Run NTP on both.",
                        root, date.timeIntervalSince(now)))
                return
            }
            add(
                "public_url", .error,
                "What answers at \(root) (HTTP \(answer.status)) is not this deployment: it did not prove the key file. Point TRIFACTOR_PUBLIC_URL and the proxy at this trifactord, with the same key file (trifactord 0.11.0 or later)."
            )
            return
        }
        self.echo = echo
        add("public_url", .ok, "\(root) reaches this deployment (trifactord \(echo.version)).")
        if echo.version != TrifactorVersion.current {
            add(
                "public_url", .warning,
                "The server at \(root) runs trifactord \(echo.version), this doctor is \(TrifactorVersion.current): restart it after an upgrade."
            )
        }
        proxies(echo, local: answer.localAddress)
        let middle = answer.sent.addingTimeInterval(answer.received.timeIntervalSince(answer.sent) / 2)
        let skew = middle.timeIntervalSince1970 + configuration.clockOffset - echo.time
        if abs(skew) > 5 {
            add(
                "clock", .warning,
                String(format: "This instance's clock is %+.0f s from the server's at %@: run NTP on both.", skew, root)
            )
        }
    }

    mutating func unreachable(_ root: String, _ error: OutboundCheck.Failure) {
        guard error.untrusted else {
            add(
                "public_url", .error,
                "\(root) cannot be reached from here: \(error.reason). Check DNS, the proxy and the firewall.")
            return
        }
        // The certificate failed verification: read it without verifying, to say why.
        let expires = try? OutboundCheck.get(URL(string: root + "/ready")!, verify: false).certificateExpires
        if let expires, expires < Date() {
            expiry(expires, of: "The certificate at \(root)", check: "public_tls")
        } else {
            add(
                "public_tls", .error,
                "The certificate at \(root) is not trusted (\(error.reason)): it names another host, or comes from an authority clients do not know. Install one for this host from a public authority."
            )
        }
    }

    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }

    /// "Forwarded headers from the proxy trusted, and from nobody else". The doctor's request claims
    /// `X-Forwarded-For: 192.0.2.77`; a proxy in front appends (or sets) the address it saw. From what came
    /// (the peer, whether it is trusted, the header as received, the address settled on) and this end's
    /// address on the connection:
    mutating func proxies(_ echo: DoctorEcho, local: String?) {
        let forged = DoctorCommand.forgedAddress
        let trusted = configuration.http.trustedProxies
        let hops = (echo.forwardedFor ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let direct = local != nil && echo.peer == local
        if echo.client == forged {
            // The doctor's own address trusted (it runs on the proxy's host, or in a trusted network): the server
            // rightly walked past it. Clients outside those networks cannot do the same.
            let afterForged = hops.firstIndex(of: forged).map { hops.index(after: $0) }
            let seenAs = afterForged.flatMap { $0 < hops.endIndex ? hops[$0] : nil } ?? (direct ? echo.peer : nil)
            if let seenAs, trusted.trusts(seenAs) {
                add(
                    "proxy", .skipped,
                    "This host (\(seenAs)) is itself a trusted proxy, so the forwarded headers cannot be checked from here: run the doctor from a host outside TRIFACTOR_TRUSTED_PROXIES."
                )
                return
            }
            add(
                "proxy", .error,
                "A request claiming X-Forwarded-For: \(forged) was taken to come from \(forged): anyone can choose the address that rate limits, lockouts and the audit log see. Have the proxy at \(echo.peer) set X-Forwarded-For itself (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for), and trust only your proxies in TRIFACTOR_TRUSTED_PROXIES."
            )
            return
        }
        if echo.forwardedFor == nil {
            // Something between dropped the header without setting its own: every user is that something.
            add(
                "proxy", .error,
                "The proxy at \(echo.peer) sends no X-Forwarded-For: every user appears as \(echo.peer) in rate limits, lockouts and the audit log. Have it send one (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for)\(echo.peerTrusted ? "" : " and add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES")."
            )
            return
        }
        let untouched = hops == [forged]
        if untouched && direct {
            add(
                "proxy", .ok,
                "No proxy stands between this host and trifactord, and a client's X-Forwarded-For is ignored.")
        } else if untouched {
            // The peer is not this host, yet the header came as sent: a relay (a proxy, a load balancer, NAT)
            // that adds nothing; every user behind it shares its address.
            add(
                "proxy", .error,
                "Requests reach trifactord from \(echo.peer), not from this host (\(local ?? "?")), and the relay there adds no address to X-Forwarded-For: every user shares \(echo.peer) in rate limits, lockouts and the audit log. Have it append the client's address (nginx: $proxy_add_x_forwarded_for) and add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES."
            )
        } else if !echo.peerTrusted {
            add(
                "proxy", .error,
                "A proxy at \(echo.peer) forwards requests to trifactord but is not in TRIFACTOR_TRUSTED_PROXIES: every user shares its address in rate limits, lockouts and the audit log. Add \(echo.peer) to TRIFACTOR_TRUSTED_PROXIES."
            )
        } else {
            add(
                "proxy", .ok,
                "Requests through the proxy at \(echo.peer) (trusted) are read as from the address it names (\(echo.client)), never one a client claims."
            )
        }
    }

    mutating func fileLimit() {
        let needed = configuration.http.connectionLimit + configuration.databasePoolSize + 64
        if let echo {
            if echo.fileLimit < echo.connectionLimit + configuration.databasePoolSize + 64 {
                add(
                    "file_limit", .error,
                    "The running server may open \(echo.fileLimit) files but accepts \(echo.connectionLimit) connections: raise LimitNOFILE= in its unit (or ulimit -n), or lower TRIFACTOR_MAX_CONNECTIONS."
                )
            } else {
                add(
                    "file_limit", .ok,
                    "The running server's file limit (\(echo.fileLimit)) covers its \(echo.connectionLimit) connections."
                )
            }
            return
        }
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        if limit.rlim_max < needed {
            add(
                "file_limit", .warning,
                "This shell may open at most \(limit.rlim_max) files, but TRIFACTOR_MAX_CONNECTIONS=\(configuration.http.connectionLimit) needs \(needed): if the server runs with this limit, raise it (LimitNOFILE= in the unit, ulimit -Hn) or lower TRIFACTOR_MAX_CONNECTIONS. The running server's own limit is checked through the public URL."
            )
        } else {
            add(
                "file_limit", .ok,
                "The file limit here (\(limit.rlim_max)) covers \(configuration.http.connectionLimit) connections (the running server's own limit is checked through the public URL)."
            )
        }
    }

    mutating func delivery() {
        if let smtp = configuration.smtp {
            if let failure = OutboundCheck.connect(smtp.url, requireTLS: smtp.requireTLS, caFile: smtp.caFile) {
                add(
                    "delivery", .error,
                    "The SMTP server \(smtp.url.host ?? "") cannot be reached from here: \(failure). Emails wait in the outbox until it can; check TRIFACTOR_SMTP_URL, its TLS and the firewall."
                )
            } else {
                add(
                    "delivery", .ok,
                    "The SMTP server \(smtp.url.host ?? "") is reached\(smtp.requireTLS ? " over TLS" : "") (the doctor does not sign in)."
                )
            }
        }
        for account in configuration.providers {
            let hosts =
                account.apiBase.map { [$0] }
                ?? (account.kind == .vonage
                    ? [URL(string: "https://rest.nexmo.com")!, URL(string: "https://api.nexmo.com")!]
                    : [URL(string: "https://api.twilio.com")!])
            for url in hosts {
                if let failure = OutboundCheck.connect(url) {
                    add(
                        "delivery", .error,
                        "\(account.kind.rawValue) at \(url.host ?? "") cannot be reached from here: \(failure). Texts fail over to the next provider, or wait; check the firewall and DNS."
                    )
                } else {
                    add("delivery", .ok, "\(account.kind.rawValue) at \(url.host ?? "") is reached.")
                }
            }
        }
        if configuration.smtp == nil && configuration.providers.isEmpty && !configuration.dev {
            add(
                "delivery", .warning,
                "No email server and no SMS provider are set: password-reset emails and phone codes cannot be sent. Set TRIFACTOR_SMTP_URL and TRIFACTOR_SMS_PROVIDER."
            )
        }
    }
}
