internal import CCurl
internal import CCurlShim
import Foundation

/// One HTTPS POST with libcurl, for every sender that posts (SMS and voice
/// providers, CIBA pings, back-channel logouts, webhooks): a body, its
/// headers, optional Basic credentials; the answer's status and body. A
/// transport failure (refused connection, TLS, timeout) is retryable; what
/// the status means is for the sender to say. Redirects are never followed.
struct ProviderHTTP: Sendable {
    /// A CA bundle to trust instead of the system's (tests and private gateways).
    var caFile: String?
    /// Seconds for the whole exchange (providers answer in well under a second).
    var timeout = 15

    /// How a sender that must not be led elsewhere connects (webhooks, `WebhookSender`).
    struct Confinement: Sendable {
        /// `CURLOPT_RESOLVE` entries (`host:port:address[,address]`): the checked addresses, and no others, are
        /// connected to, so a DNS answer that changes in between cannot take the post elsewhere.
        var pinned: [String] = []
        /// No proxy from the environment, which would connect wherever it likes, past an address check.
        var noProxy = false
        /// Bytes of the answer read; past them the transfer stops (the status and first bytes are enough).
        var answerLimit = 65_536
        /// Seconds to connect.
        var connectTimeout = 5
    }

    struct Answer: Sendable {
        let status: Int
        let body: Data
        /// The body as a JSON object, or empty.
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    func post(
        _ url: URL, contentType: String, body: Data, headers: [String] = [],
        basic: (user: String, password: String)? = nil,
        provider: String, userAgent: String = "Trifactor/\(Self.userAgentVersion)",
        confinement: Confinement = Confinement()
    ) throws(DeliveryError) -> Answer {
        _ = SMTPSender.globalInit
        guard let handle = curl_easy_init() else {
            throw DeliveryError(reason: "\(provider): curl_easy_init failed", retryable: true)
        }
        defer { curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in [
            "Content-Type: \(contentType)", "Accept: application/json", "User-Agent: \(userAgent)", "Expect:",
        ] + headers {
            list = curl_slist_append(list, header)
        }
        defer { curl_slist_free_all(list) }
        var pinned: UnsafeMutablePointer<curl_slist>?
        for entry in confinement.pinned { pinned = curl_slist_append(pinned, entry) }
        defer { curl_slist_free_all(pinned) }
        let sink = ResponseSink(limit: confinement.answerLimit)
        let retained = Unmanaged.passRetained(sink)
        defer { retained.release() }
        let payload = [UInt8](body)
        let result: CURLcode = payload.withUnsafeBufferPointer { bytes in
            var codes: [CURLcode] = [
                trifactor_curl_set_string(handle, CURLOPT_URL, url.absoluteString),
                trifactor_curl_set_long(handle, CURLOPT_POST, 1),
                trifactor_curl_set_pointer(
                    handle, CURLOPT_POSTFIELDS,
                    UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafePointer(bitPattern: 1))),
                trifactor_curl_set_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)),
                trifactor_curl_set_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)),
                trifactor_curl_set_write_function(
                    handle,
                    { data, size, count, context in
                        guard let data, let context else { return 0 }
                        return Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue().append(
                            data, size * count)
                    }),
                trifactor_curl_set_pointer(handle, CURLOPT_WRITEDATA, retained.toOpaque()),
                trifactor_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, confinement.connectTimeout),
                trifactor_curl_set_long(handle, CURLOPT_TIMEOUT, timeout),
                trifactor_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
                trifactor_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                trifactor_curl_set_long(handle, CURLOPT_PROTOCOLS, Int(CURLPROTO_HTTP | CURLPROTO_HTTPS)),
            ]
            if confinement.noProxy {
                codes.append(trifactor_curl_set_string(handle, CURLOPT_PROXY, ""))
                codes.append(trifactor_curl_set_string(handle, CURLOPT_NOPROXY, "*"))
            }
            if let pinned { codes.append(trifactor_curl_set_pointer(handle, CURLOPT_RESOLVE, pinned)) }
            if let basic {
                // 1 is CURLAUTH_BASIC, a macro Swift does not import.
                codes.append(trifactor_curl_set_long(handle, CURLOPT_HTTPAUTH, 1))
                codes.append(trifactor_curl_set_string(handle, CURLOPT_USERNAME, basic.user))
                codes.append(trifactor_curl_set_string(handle, CURLOPT_PASSWORD, basic.password))
            }
            if let caFile { codes.append(trifactor_curl_set_string(handle, CURLOPT_CAINFO, caFile)) }
            if let bad = codes.first(where: { $0 != CURLE_OK }) { return bad }
            return curl_easy_perform(handle)
        }
        // An answer longer than the cap stops the transfer once its status and first bytes are in: enough.
        guard result == CURLE_OK || (result == CURLE_WRITE_ERROR && sink.full) else {
            throw DeliveryError(reason: "\(provider): \(String(cString: curl_easy_strerror(result)))", retryable: true)
        }
        var status = 0
        _ = withUnsafeMutablePointer(to: &status) { trifactor_curl_info_long(handle, CURLINFO_RESPONSE_CODE, $0) }
        return Answer(status: status, body: sink.data)
    }

    static let userAgentVersion = "1"

    /// `application/x-www-form-urlencoded` of `fields`, in their order.
    static func form(_ fields: [(String, String)]) -> Data {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._*")
        let encode = { (s: String) in
            (s.addingPercentEncoding(withAllowedCharacters: allowed) ?? "").replacingOccurrences(of: "%20", with: "+")
        }
        return Data(fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&").utf8)
    }
}

/// The answer's bytes as libcurl hands them over, up to `limit` (64 KiB unless told: a provider's answer is small);
/// past it the transfer stops, and `full` says why.
/// `@unchecked Sendable`: only the one transfer writes it, on the sending thread.
final class ResponseSink: @unchecked Sendable {
    private let limit: Int
    private(set) var data = Data()
    private(set) var full = false

    init(limit: Int = 65_536) { self.limit = limit }

    func append(_ bytes: UnsafeMutablePointer<CChar>, _ count: Int) -> Int {
        guard data.count + count <= limit else {
            full = true
            return 0
        }
        data.append(UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: count)
        return count
    }
}
