package import Foundation

/// One SMS and voice provider account, from a URL-style setting:
///
/// - `vonage://API_KEY@?from=Trifactor&secret_file=PATH` (SMS API), plus
///   `signature_secret_file=PATH` to verify delivery receipts, and
///   `application_id=ID&private_key_file=PATH&voice_from=NUMBER` for calls
///   (Voice API).
/// - `twilio://ACCOUNT_SID@?from=+15005550006&token_file=PATH` (Messages and
///   Voice; the auth token also signs status callbacks), or
///   `messaging_service_sid=MG…` instead of `from` for texts.
///
/// A host after `@` replaces the provider's API host (a gateway, or a test
/// server: plain http only on loopback). Secrets come from files and are never
/// logged; `description` names the account without them.
package struct ProviderAccount: Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable { case vonage, twilio }

    package let kind: Kind
    /// Vonage API key or Twilio Account SID.
    package let key: String
    /// Vonage API secret or Twilio auth token.
    let secret: String
    /// The sender of texts: a number or an alphanumeric sender id.
    package let from: String
    /// The caller number of voice calls (nil: this account sends no calls).
    package let voiceFrom: String?
    let messagingServiceSID: String?
    /// Vonage: the signature secret of signed delivery receipts and voice events.
    let signatureSecret: String?
    /// Vonage Voice: the application id and its RSA private key (PEM).
    let applicationID: String?
    let privateKeyPEM: String?
    /// Where requests go instead of the provider's hosts (nil: the real ones).
    package let apiBase: URL?

    /// Reads a setting. - Throws: `Invalid` with a sentence for the operator.
    package static func parse(
        _ text: String, readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }
    ) throws(Invalid) -> ProviderAccount {
        guard let url = URLComponents(string: text), let scheme = url.scheme, let kind = Kind(rawValue: scheme) else {
            throw Invalid("\(redacted(text)) must start with vonage:// or twilio://")
        }
        guard let key = url.user, !key.isEmpty, key.count <= 64,
            key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else {
            throw Invalid("\(kind.rawValue): the API key or Account SID goes before the @ (letters and digits)")
        }
        guard url.password == nil else {
            throw Invalid("\(kind.rawValue): put the secret in a file (secret_file= or token_file=), not in the URL")
        }
        var query: [String: String] = [:]
        for item in url.queryItems ?? [] {
            guard query[item.name] == nil else { throw Invalid("\(kind.rawValue): \(item.name) is given twice") }
            query[item.name] = item.value ?? ""
        }
        let known: Set<String> =
            kind == .vonage
            ? ["from", "secret_file", "signature_secret_file", "application_id", "private_key_file", "voice_from"]
            : ["from", "token_file", "messaging_service_sid"]
        if let unknown = query.keys.sorted().first(where: { !known.contains($0) }) {
            throw Invalid(
                "\(kind.rawValue): unknown parameter \(unknown) (known: \(known.sorted().joined(separator: ", ")))")
        }
        func file(_ name: String, required: Bool) throws(Invalid) -> String? {
            guard let path = query[name] else {
                if required { throw Invalid("\(kind.rawValue): \(name)=PATH is required") }
                return nil
            }
            guard let content = readFile(path)?.trimmingCharacters(in: .whitespacesAndNewlines), !content.isEmpty else {
                throw Invalid("\(kind.rawValue): \(name) (\(path)) cannot be read or is empty")
            }
            return content
        }
        var apiBase: URL?
        if let host = url.host, !host.isEmpty {
            let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
            apiBase = URL(string: "\(loopback ? "http" : "https")://\(host)\(url.port.map { ":\($0)" } ?? "")")
        }
        let from = query["from"] ?? ""
        switch kind {
        case .vonage:
            guard isSender(from) else {
                throw Invalid("vonage: from= must be a number (digits) or a sender id of up to 11 letters and digits")
            }
            let voiceFrom = query["voice_from"]
            if let voiceFrom, !isNumber(voiceFrom) {
                throw Invalid("vonage: voice_from= must be a phone number in digits")
            }
            if let id = query["application_id"],
                !(1...64).contains(id.count) || !id.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") })
            {
                throw Invalid("vonage: application_id= must be the application's id (a UUID)")
            }
            let voice = [query["application_id"], query["private_key_file"], voiceFrom].compactMap { $0 }.count
            guard voice == 0 || voice == 3 else {
                throw Invalid("vonage: calls need application_id=, private_key_file= and voice_from= together")
            }
            return ProviderAccount(
                kind: kind, key: key, secret: try file("secret_file", required: true) ?? "", from: from,
                voiceFrom: voiceFrom,
                messagingServiceSID: nil, signatureSecret: try file("signature_secret_file", required: false),
                applicationID: query["application_id"], privateKeyPEM: try file("private_key_file", required: false),
                apiBase: apiBase)
        case .twilio:
            let service = query["messaging_service_sid"]
            guard isSender(from) || (from.isEmpty && service != nil) else {
                throw Invalid("twilio: from= must be a number (+E.164) or a sender id, or give messaging_service_sid=")
            }
            let number = from.hasPrefix("+") ? String(from.dropFirst()) : from
            return ProviderAccount(
                kind: kind, key: key, secret: try file("token_file", required: true) ?? "", from: from,
                voiceFrom: isNumber(number) ? from : nil, messagingServiceSID: service, signatureSecret: nil,
                applicationID: nil, privateKeyPEM: nil, apiBase: apiBase)
        }
    }

    /// The channels this account can deliver.
    package var channels: Set<Channel> { voiceFrom == nil ? [.sms] : [.sms, .voice] }

    /// The secret that signs this provider's callbacks (Twilio: the auth token).
    package var callbackSecret: String? { kind == .twilio ? secret : signatureSecret }

    package var description: String {
        "\(kind.rawValue)://\(key)@\(apiBase?.host ?? "") from=\(from)" + (voiceFrom.map { " voice_from=\($0)" } ?? "")
    }

    static func isNumber(_ s: String) -> Bool {
        (6...15).contains(s.count) && s.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func isSender(_ s: String) -> Bool {
        let digits = s.hasPrefix("+") ? String(s.dropFirst()) : s
        if isNumber(digits) { return true }
        return (1...11).contains(s.count) && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " ") }
            && s.contains(where: \.isLetter)
    }

    static func redacted(_ text: String) -> String { text.split(separator: "?").first.map(String.init) ?? "" }

    /// A setting that cannot be used, with the sentence to show.
    package struct Invalid: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }
}
