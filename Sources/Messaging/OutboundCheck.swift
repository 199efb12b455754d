internal import CCurl
internal import CCurlShim
package import Foundation

/// The deployment doctor's look at what trifactord reaches and is reached by, with libcurl: one GET (no
/// redirect followed, the answer capped at 64 KiB) or a bare connection (TCP, and TLS for https and smtps).
package enum OutboundCheck {
    package struct Answer: Sendable {
        package let status: Int
        package let body: Data
        /// The response's headers, lower-cased names, the last of a name kept.
        package let headers: [String: String]
        /// When the server's certificate expires (https only).
        package let certificateExpires: Date?
        /// This end's address on the connection.
        package let localAddress: String?
        /// When the request started and when the answer was in.
        package let sent: Date
        package let received: Date
    }

    /// A sentence from libcurl: what went wrong, for a finding; `untrusted`: the server's certificate failed
    /// verification (expired, another host's, an unknown authority).
    package struct Failure: Error, Sendable {
        package let reason: String
        package var untrusted = false
    }

    /// `GET url` with `headers`; throws `Failure` when no answer came (refused, unresolved, TLS, timeout).
    package static func get(
        _ url: URL, headers: [String] = [], caFile: String? = nil, timeout: Int = 10, verify: Bool = true
    ) throws(Failure) -> Answer {
        _ = SMTPSender.globalInit
        guard let handle = curl_easy_init() else { throw Failure(reason: "curl_easy_init failed", untrusted: false) }
        defer { curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in ["User-Agent: trifactord-doctor/1"] + headers { list = curl_slist_append(list, header) }
        defer { curl_slist_free_all(list) }
        let sink = ResponseSink()
        let retained = Unmanaged.passRetained(sink)
        defer { retained.release() }
        var codes: [CURLcode] = [
            trifactor_curl_set_string(handle, CURLOPT_URL, url.absoluteString),
            trifactor_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)),
            trifactor_curl_set_write_function(
                handle,
                { data, size, count, context in
                    guard let data, let context else { return 0 }
                    return Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue().append(data, size * count)
                }),
            trifactor_curl_set_pointer(handle, CURLOPT_WRITEDATA, retained.toOpaque()),
            trifactor_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, min(timeout, 5)),
            trifactor_curl_set_long(handle, CURLOPT_TIMEOUT, timeout),
            trifactor_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            trifactor_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            trifactor_curl_set_long(handle, CURLOPT_CERTINFO, 1),
            trifactor_curl_set_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)),
            // Straight there, as clients come: a proxy from the environment would add its own forwarding headers.
            trifactor_curl_set_string(handle, CURLOPT_PROXY, ""),
            trifactor_curl_set_string(handle, CURLOPT_NOPROXY, "*"),
        ]
        if !verify {
            codes.append(trifactor_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 0))
            codes.append(trifactor_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if let caFile { codes.append(trifactor_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        if let bad = codes.first(where: { $0 != CURLE_OK }) {
            throw Failure(reason: String(cString: curl_easy_strerror(bad)), untrusted: false)
        }
        let started = Date()
        let result = curl_easy_perform(handle)
        guard result == CURLE_OK else {
            throw Failure(
                reason: String(cString: curl_easy_strerror(result)), untrusted: result == CURLE_PEER_FAILED_VERIFICATION
            )
        }
        var local: UnsafeMutableRawPointer?
        let localAddress =
            trifactor_curl_info_pointer(handle, CURLINFO_LOCAL_IP, &local) == CURLE_OK
            ? local.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } : nil
        var status = 0
        _ = withUnsafeMutablePointer(to: &status) { trifactor_curl_info_long(handle, CURLINFO_RESPONSE_CODE, $0) }
        var answerHeaders: [String: String] = [:]
        var previous: UnsafeMutablePointer<curl_header>?
        while let header = curl_easy_nextheader(handle, UInt32(CURLH_HEADER), -1, previous) {
            answerHeaders[String(cString: header.pointee.name).lowercased()] = String(cString: header.pointee.value)
            previous = header
        }
        return Answer(
            status: status, body: sink.data, headers: answerHeaders,
            certificateExpires: url.scheme == "https" ? expiry(handle) : nil, localAddress: localAddress,
            sent: started, received: Date())
    }

    /// Connects to `url`'s host and port and goes through the protocol's opening, never signing in (any user or
    /// password in the URL is dropped): TLS for https and smtps, SMTP's greeting and EHLO, and STARTTLS when
    /// `requireTLS` (as trifactord sends mail); then hangs up. nil when that worked, else why not.
    package static func connect(_ url: URL, requireTLS: Bool = false, caFile: String? = nil, timeout: Int = 5)
        -> String?
    {
        _ = SMTPSender.globalInit
        guard let handle = curl_easy_init() else { return "curl_easy_init failed" }
        defer { curl_easy_cleanup(handle) }
        var anonymous = URLComponents(url: url, resolvingAgainstBaseURL: false)
        anonymous?.user = nil
        anonymous?.password = nil
        var codes: [CURLcode] = [
            trifactor_curl_set_string(handle, CURLOPT_URL, anonymous?.string ?? url.absoluteString),
            trifactor_curl_set_long(handle, CURLOPT_CONNECT_ONLY, 1),
            trifactor_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, timeout),
            trifactor_curl_set_long(handle, CURLOPT_TIMEOUT, timeout),
            trifactor_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            // Straight there: a proxy from the environment would check the proxy instead.
            trifactor_curl_set_string(handle, CURLOPT_PROXY, ""),
            trifactor_curl_set_string(handle, CURLOPT_NOPROXY, "*"),
        ]
        if requireTLS { codes.append(trifactor_curl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))) }
        if let caFile { codes.append(trifactor_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        if let bad = codes.first(where: { $0 != CURLE_OK }) { return String(cString: curl_easy_strerror(bad)) }
        let result = curl_easy_perform(handle)
        return result == CURLE_OK ? nil : String(cString: curl_easy_strerror(result))
    }

    /// The leaf certificate's "Expire date" from libcurl's certificate information (`Mar  1 12:00:00 2027 GMT`).
    private static func expiry(_ handle: UnsafeMutableRawPointer) -> Date? {
        var raw: UnsafeMutableRawPointer?
        guard trifactor_curl_info_pointer(handle, CURLINFO_CERTINFO, &raw) == CURLE_OK, let raw else { return nil }
        let info = raw.assumingMemoryBound(to: curl_certinfo.self).pointee
        guard info.num_of_certs > 0, let leaf = info.certinfo?[0] else { return nil }
        var item: UnsafeMutablePointer<curl_slist>? = leaf
        while let entry = item {
            if let data = entry.pointee.data {
                let line = String(cString: data)
                if line.hasPrefix("Expire date:") { return parseDate(String(line.dropFirst("Expire date:".count))) }
            }
            item = entry.pointee.next
        }
        return nil
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "MMM d HH:mm:ss yyyy zzz"
        let squeezed = text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        if let date = formatter.date(from: squeezed) { return date }
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss zzz"
        return formatter.date(from: squeezed)
    }
}
