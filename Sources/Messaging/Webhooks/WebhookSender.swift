package import Foundation

/// Posts one Standard Webhooks message with libcurl, safely: https only
/// (plain http only to loopback, and only while private addresses are
/// allowed, for tests), the host resolved here and every address checked by
/// `WebhookAddress` before anything is sent, the checked addresses pinned
/// (`CURLOPT_RESOLVE`) so that a DNS answer that changes in between cannot
/// take the post elsewhere, no redirect followed, no proxy from the
/// environment, the whole exchange capped at `timeout` seconds and the
/// answer read for at most `answerLimit` bytes. It runs on the webhook
/// dispatcher's thread, never on a request's.
package struct WebhookSender: Sendable {
    /// Whether private, loopback and link-local addresses may be reached (`TRIFACTOR_WEBHOOKS_ALLOW_PRIVATE`).
    package var allowPrivate: Bool
    /// Seconds for the whole exchange: a slow receiver holds one dispatcher thread this long at most.
    package var timeout: Int
    /// A CA bundle to trust instead of the system's (tests, private receivers).
    package var caFile: String?
    /// Bytes of the answer read: a receiver's answer is only looked at for its status.
    package static let answerLimit = 4096

    /// A sender; `timeout` in seconds.
    package init(allowPrivate: Bool = false, timeout: Int = 5, caFile: String? = nil) {
        self.allowPrivate = allowPrivate
        self.timeout = timeout
        self.caFile = caFile
    }

    /// Where a post goes: the URL's host and port, and the checked addresses it resolved to.
    package struct Target: Sendable, Equatable {
        package let host: String
        package let port: Int
        package let addresses: [String]
    }

    /// Why `url` may not be registered (scheme, form, or a restricted address it resolves to), or nil.
    /// A host that does not resolve yet is accepted: it is checked again before every post.
    package func refusal(of url: URL) -> String? {
        do {
            _ = try target(url)
            return nil
        } catch {
            return error.retryable ? nil : error.reason
        }
    }

    /// The checked target of `url`.
    /// - Throws: `DeliveryError`, not retryable for a refused scheme or address, retryable when the name
    ///   did not resolve (DNS may be back later).
    package func target(_ url: URL) throws(DeliveryError) -> Target {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            var host = url.host, !host.isEmpty, url.user == nil, url.password == nil
        else { throw DeliveryError(reason: "webhook: not an https URL", retryable: false) }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let addresses = try Self.resolve(host)
        if !allowPrivate, let bad = addresses.first(where: WebhookAddress.isRestricted) {
            throw DeliveryError(
                reason: "webhook: \(host) resolves to \(bad), a private, loopback or link-local address",
                retryable: false)
        }
        if scheme == "http" && !(allowPrivate && addresses.allSatisfy(WebhookAddress.isLoopback)) {
            throw DeliveryError(reason: "webhook: http is allowed only to loopback, for tests", retryable: false)
        }
        return Target(host: host, port: port, addresses: addresses)
    }

    /// Posts `body` with `headers` to `url`; returns the answer's status when it was 2xx.
    /// - Throws: `DeliveryError`: retryable for no answer (refused, unresolved, timeout), 408, 429 and 5xx;
    ///   not retryable for a refused address, a redirect or another 4xx.
    package func post(_ url: URL, headers: [String], body: Data) throws(DeliveryError) -> Int {
        let target = try target(url)
        var confinement = ProviderHTTP.Confinement(
            noProxy: true, answerLimit: Self.answerLimit, connectTimeout: min(timeout, 3))
        // The addresses checked above, and no others, are the ones connected to (all of them, so that curl can
        // still fall back from IPv6 to IPv4 as it does for a name).
        if target.addresses != [target.host] {
            let shown = target.addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
            confinement.pinned = ["\(target.host):\(target.port):\(shown)"]
        }
        let status = try ProviderHTTP(caFile: caFile, timeout: timeout).post(
            url, contentType: "application/json", body: body, headers: headers, provider: "webhook",
            userAgent: "Trifactor-Webhooks/1", confinement: confinement
        ).status
        switch status {
        case 200..<300: return status
        case 300..<400:
            throw DeliveryError(reason: "webhook: HTTP \(status), redirects are not followed", retryable: false)
        case 408, 429, 500...: throw DeliveryError(reason: "webhook: HTTP \(status)", retryable: true)
        default: throw DeliveryError(reason: "webhook: HTTP \(status)", retryable: false)
        }
    }

    /// The numeric addresses `host` resolves to (itself when it is one).
    /// - Throws: a retryable `DeliveryError` when it resolves to nothing.
    static func resolve(_ host: String) throws(DeliveryError) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw DeliveryError(reason: "webhook: \(host) does not resolve", retryable: true)
        }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry {
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(
                e.pointee.ai_addr, e.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST)
                == 0
            {
                let address = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if !addresses.contains(address) { addresses.append(address) }
            }
            entry = e.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw DeliveryError(reason: "webhook: \(host) does not resolve", retryable: true)
        }
        return addresses
    }
}
