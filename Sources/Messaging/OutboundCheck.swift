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
    }

    /// A sentence from libcurl: what went wrong, for a finding.
    package struct Failure: Error, Sendable { package let reason: String }

    /// `GET url` with `headers`; throws `Failure` when no answer came (refused, unresolved, TLS, timeout).
    package static func get(_ url: URL, headers: [String] = [], caFile: String? = nil, timeout: Int = 10)
        throws(Failure) -> Answer
    {
        _ = SMTPSender.globalInit
        guard let handle = curl_easy_init() else { throw Failure(reason: "curl_easy_init failed") }
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
        ]
        if let caFile { codes.append(trifactor_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
        if let bad = codes.first(where: { $0 != CURLE_OK }) {
            throw Failure(reason: String(cString: curl_easy_strerror(bad)))
        }
        let result = curl_easy_perform(handle)
        guard result == CURLE_OK else { throw Failure(reason: String(cString: curl_easy_strerror(result))) }
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
            certificateExpires: url.scheme == "https" ? expiry(handle) : nil)
    }

    /// Connects to `url`'s host and port (TLS too for https and smtps) and hangs up; nil when that worked, else
    /// why not.
    package static func connect(_ url: URL, caFile: String? = nil, timeout: Int = 5) -> String? {
        _ = SMTPSender.globalInit
        guard let handle = curl_easy_init() else { return "curl_easy_init failed" }
        defer { curl_easy_cleanup(handle) }
        var codes: [CURLcode] = [
            trifactor_curl_set_string(handle, CURLOPT_URL, url.absoluteString),
            trifactor_curl_set_long(handle, CURLOPT_CONNECT_ONLY, 1),
            trifactor_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, timeout),
            trifactor_curl_set_long(handle, CURLOPT_TIMEOUT, timeout),
            trifactor_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
        ]
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
