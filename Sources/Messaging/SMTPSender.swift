internal import CCurl
internal import CCurlShim
package import Foundation

/// Email over SMTP with libcurl: `smtp://` with STARTTLS required (or
/// `smtps://`), authentication, From and Reply-To, `Date` and `Message-ID`,
/// a plain-text part and a simple HTML part (UTF-8, base64, non-ASCII
/// subjects and names as RFC 2047 encoded words). Every failure is
/// retryable (a refused recipient, a server that is down, a TLS failure):
/// the outbox retries, then records the failure; nothing is lost silently.
package struct SMTPSender: MessageSender {
    package struct Settings: Sendable {
        /// `smtp://[user@]host[:port]` or `smtps://…`.
        package var url: URL
        package var password: String?
        /// `Trifactor <noreply@example.com>`.
        package var from: String
        package var replyTo: String?
        /// A CA bundle to trust instead of the system's (a private relay's certificate).
        package var caFile: String?
        /// Require STARTTLS on `smtp://` (the default); off only for a relay on loopback.
        package var requireTLS = true
        /// The brand in subjects ("Trifactor").
        package var brand = "Trifactor"

        package init(url: URL, password: String?, from: String) {
            self.url = url
            self.password = password
            self.from = from
        }
    }

    let settings: Settings

    package init(_ settings: Settings) {
        _ = Self.globalInit
        self.settings = settings
    }

    package var channels: Set<Channel> { [.email] }
    package var longestSend: Double { Double(Self.timeoutSeconds) }
    /// Seconds for the whole SMTP exchange.
    static let timeoutSeconds = 30

    static let globalInit: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    package func send(_ message: OutgoingMessage) throws(DeliveryError) -> Delivery {
        guard message.channel == .email else { throw DeliveryError(reason: "SMTP sends email only", retryable: false) }
        let now = Date()
        let messageID = "<\(message.id).\(UUID().uuidString.lowercased())@\(Self.domain(of: settings.from))>"
        let document = Self.document(message, settings: settings, date: now, messageID: messageID)
        guard let handle = curl_easy_init() else {
            throw DeliveryError(reason: "curl_easy_init failed", retryable: true)
        }
        defer { curl_easy_cleanup(handle) }
        let body = UploadBody(Array(document.utf8))
        let unmanaged = Unmanaged.passRetained(body)
        defer { unmanaged.release() }
        let recipients: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "<\(message.to)>")
        defer { curl_slist_free_all(recipients) }
        var url = settings.url.absoluteString
        if let user = settings.url.user, let range = url.range(of: "\(user)@") { url.removeSubrange(range) }
        var codes: [CURLcode] = [
            trifactor_curl_set_string(handle, CURLOPT_URL, url),
            trifactor_curl_set_string(handle, CURLOPT_MAIL_FROM, "<\(Self.address(of: settings.from))>"),
            trifactor_curl_set_pointer(handle, CURLOPT_MAIL_RCPT, UnsafeMutableRawPointer(recipients)),
            trifactor_curl_set_long(handle, CURLOPT_UPLOAD, 1),
            trifactor_curl_set_read_function(
                handle,
                { buffer, size, count, data in
                    guard let buffer, let data else { return 0 }
                    return Unmanaged<UploadBody>.fromOpaque(data).takeUnretainedValue().read(
                        into: buffer, max: size * count)
                }),
            trifactor_curl_set_pointer(handle, CURLOPT_READDATA, unmanaged.toOpaque()),
            trifactor_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 10),
            trifactor_curl_set_long(handle, CURLOPT_TIMEOUT, Self.timeoutSeconds),
            trifactor_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
        ]
        if settings.requireTLS {
            codes.append(trifactor_curl_set_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)))
        }
        if let user = settings.url.user {
            codes.append(trifactor_curl_set_string(handle, CURLOPT_USERNAME, user.removingPercentEncoding ?? user))
        }
        if let password = settings.password {
            codes.append(trifactor_curl_set_string(handle, CURLOPT_PASSWORD, password))
        }
        if let ca = settings.caFile { codes.append(trifactor_curl_set_string(handle, CURLOPT_CAINFO, ca)) }
        if let bad = codes.first(where: { $0 != CURLE_OK }) {
            throw DeliveryError(
                reason: "SMTP settings refused by libcurl (\(String(cString: curl_easy_strerror(bad))))",
                retryable: false)
        }
        let result = curl_easy_perform(handle)
        guard result == CURLE_OK else {
            var response = 0
            _ = withUnsafeMutablePointer(to: &response) { trifactor_curl_info_long(handle, CURLINFO_RESPONSE_CODE, $0) }
            throw DeliveryError(
                reason: "SMTP \(response == 0 ? "" : "\(response) ")\(String(cString: curl_easy_strerror(result)))",
                retryable: true)
        }
        return Delivery(provider: "smtp", reference: messageID)
    }

    // MARK: The message

    static func document(_ message: OutgoingMessage, settings: Settings, date: Date, messageID: String) -> String {
        let boundary = "trifactor-\(UUID().uuidString.lowercased())"
        let subject =
            message.subject ?? "\(settings.brand): "
            + (message.text.split(separator: ".").first.map { String($0.prefix(60)) } ?? "a message")
        let html =
            "<!doctype html><html><body><p>" + escape(message.text).replacingOccurrences(of: "\n", with: "<br>")
            + "</p></body></html>"
        var lines = [
            "Date: \(rfc5322(date))",
            "From: \(header(settings.from))",
            "To: <\(message.to)>",
        ]
        if let replyTo = settings.replyTo { lines.append("Reply-To: \(header(replyTo))") }
        lines += [
            "Subject: \(encodedWord(subject))",
            "Message-ID: \(messageID)",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(message.text),
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(html),
            "--\(boundary)--",
            "",
        ]
        return lines.joined(separator: "\r\n")
    }

    /// `Name <address>` with a non-ASCII name as an encoded word.
    static func header(_ mailbox: String) -> String {
        guard let open = mailbox.lastIndex(of: "<") else { return mailbox }
        let name = mailbox[..<open].trimmingCharacters(in: .whitespaces)
        return name.isEmpty ? String(mailbox[open...]) : "\(encodedWord(name)) \(mailbox[open...])"
    }

    static func address(of mailbox: String) -> String {
        guard let open = mailbox.lastIndex(of: "<"), let close = mailbox.lastIndex(of: ">"), open < close else {
            return mailbox.trimmingCharacters(in: .whitespaces)
        }
        return String(mailbox[mailbox.index(after: open)..<close])
    }

    static func domain(of mailbox: String) -> String {
        address(of: mailbox).split(separator: "@").last.map(String.init) ?? "trifactor.invalid"
    }

    /// RFC 2047 `=?UTF-8?B?…?=` for text that is not plain printable ASCII.
    static func encodedWord(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return text }
        return "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    static func base64Lines(_ text: String) -> String {
        let encoded = Data(text.utf8).base64EncodedString()
        return stride(from: 0, to: encoded.count, by: 76).map { i -> String in
            let start = encoded.index(encoded.startIndex, offsetBy: i)
            return String(
                encoded[start..<(encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
        }.joined(separator: "\r\n")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    static func rfc5322(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}

/// The message handed to libcurl's read callback, a piece at a time.
/// `@unchecked Sendable`: only libcurl's one transfer reads it, on the sending thread.
final class UploadBody: @unchecked Sendable {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let count = min(max, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
