import Core
import Foundation
import HTTP
import Messaging

/// Who made a request, as the audit log records it: the client's address
/// and user agent, taken once from the request; and the relying party's
/// brand, which its texts, calls, emails and authenticator-app entries bear.
struct AuditContext: Sendable {
    let ip: String
    let userAgent: String?
    /// The relying party's name, from `X-Trifactor-Brand` of a trusted proxy
    /// (a bank's server), one of `TRIFACTOR_BRANDS` (the HTTP layer drops any
    /// other): 1 to 18 letters, digits, spaces and `&'.-`, as Vonage's brand.
    /// nil: the server's own (`TRIFACTOR_TOTP_ISSUER`).
    var brand: String?
    /// The language of the hosted page that asked, which the texts and calls it starts speak (nil: the account's
    /// language, else the server's).
    var language: String?

    init(_ request: Request) {
        ip = request.remoteAddress
        userAgent = request.header("user-agent")
        brand = request.header("x-trifactor-brand").flatMap(Self.brand)
    }

    init(ip: String, userAgent: String?, brand: String? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.brand = brand.flatMap(Self.brand)
    }

    /// `text` when it may name a brand in a text message; nil otherwise (the server's own name is used).
    static func brand(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard (1...18).contains(trimmed.count),
            trimmed.unicodeScalars.allSatisfy({
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || " &'.-".unicodeScalars.contains($0))
            })
        else { return nil }
        return trimmed
    }

    /// `values` with this client's brand, when it named one, for an email's `{brand}`.
    func branded(_ values: [String: MessageCatalog.Value]) -> [String: MessageCatalog.Value] {
        guard let brand else { return values }
        return values.merging(["brand": .text(brand)]) { _, new in new }
    }

    /// The key per-IP limits count under (an IPv6 client by its /64).
    var clientKey: String { ClientKey.of(address: ip) }

    func event(_ kind: AuditEventKind, _ outcome: AuditOutcome, userID: UserID? = nil, detail: String? = nil)
        -> AuditEvent
    {
        AuditEvent(kind: kind, outcome: outcome, userID: userID?.raw, ip: ip, userAgent: userAgent, detail: detail)
    }
}
