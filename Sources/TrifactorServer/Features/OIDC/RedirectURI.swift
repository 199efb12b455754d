import Foundation

/// The rules for redirect URIs: which may be registered, and when a
/// requested one matches a registered one. Matching is exact string
/// comparison (RFC 9700 §4.1.3: no patterns, no normalisation), with one
/// exception the native-app BCP requires: a loopback IP literal matches on
/// any port (RFC 8252 §7.3), because a native app's listener gets its port
/// from the system.
enum RedirectURI {
    /// Why a redirect URI cannot be registered; `nil` when it can.
    /// - Parameter isPublic: private-use schemes (`com.example.app:/cb`, RFC 8252 §7.1) are for native apps only.
    static func refusal(_ text: String, isPublic: Bool) -> String? {
        guard text.utf8.count <= 2000, !text.isEmpty else { return "must be 1 to 2000 characters" }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7f }) else {
            return "must not contain spaces or characters outside ASCII"
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased() else {
            return "must be an absolute URI"
        }
        // RFC 6749 §3.1.2: the endpoint URI must not include a fragment component.
        guard parts.fragment == nil, !text.contains("#") else { return "must not have a fragment" }
        guard parts.user == nil, parts.password == nil else { return "must not carry a user name or password" }
        switch scheme {
        case "https":
            guard let host = parts.host, !host.isEmpty else { return "must name a host" }
            return nil
        case "http":
            guard let host = parts.host, isLoopback(host) || host.lowercased() == "localhost" else {
                return "must use https (http only to a loopback address)"
            }
            return nil
        default:
            // RFC 8252 §7.1: a private-use scheme is a reverse domain name, so it holds a period.
            guard isPublic, scheme.contains("."), parts.host == nil || parts.host == "" else {
                return isPublic
                    ? "must use https, http to a loopback address, or a reverse-domain scheme like com.example.app:/callback"
                    : "must use https (http only to a loopback address)"
            }
            return nil
        }
    }

    /// Whether `requested` is one of `registered`.
    static func matches(_ requested: String, registered: [String]) -> Bool {
        registered.contains { candidate in
            if candidate == requested { return true }
            // RFC 8252 §7.3: any port on a loopback IP literal, the rest exactly as registered.
            guard let a = loopbackWithoutPort(candidate), let b = loopbackWithoutPort(requested) else { return false }
            return a == b
        }
    }

    /// `http://127.0.0.1:PORT/path?query` without its port, when it is one; nil otherwise.
    private static func loopbackWithoutPort(_ text: String) -> String? {
        guard text.hasPrefix("http://"), var parts = URLComponents(string: text), let host = parts.host,
            host == "127.0.0.1" || host == "::1" || host == "[::1]", parts.user == nil, parts.fragment == nil
        else { return nil }
        parts.port = nil
        return parts.string
    }

    private static func isLoopback(_ host: String) -> Bool {
        host == "127.0.0.1" || host == "::1" || host == "[::1]"
    }
}
