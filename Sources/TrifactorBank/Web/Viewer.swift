/// Whom a page is rendered for: the CSRF token its forms carry, and
/// whether the navigation of a signed-in customer shows.
protocol Viewer: Sendable {
    /// The token every form of the page carries (and `X-CSRF-Token` for the passkey script).
    var csrf: String { get }
    /// Whether a customer is signed in.
    var isSignedIn: Bool { get }
}

/// A browser the bank keeps no session for: its token is a `VisitorCSRF` one.
struct Visitor: Viewer {
    let csrf: String
    var isSignedIn: Bool { false }
}
