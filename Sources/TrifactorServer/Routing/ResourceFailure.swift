/// A file trifactord ships with is missing or unreadable: it does not start
/// without it (a missing password blocklist would silently weaken sign-up).
struct ResourceFailure: Error, CustomStringConvertible {
    let description: String
}
