/// Runs a device's enrollments one at a time in this process, per key tag: two at once (a double tap, a view's task
/// started twice) would each make the approval key anew, and the second would replace the key the first enrolled.
actor EnrollmentLock {
    static let shared = EnrollmentLock()

    private var held: Set<String> = []
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// Returns when `tag` is this caller's; a caller already holding it would wait for itself.
    func acquire(_ tag: String) async {
        if held.insert(tag).inserted { return }
        await withCheckedContinuation { waiting[tag, default: []].append($0) }
    }

    /// Hands `tag` to the next waiter, or frees it.
    func release(_ tag: String) {
        if var queue = waiting[tag], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[tag] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            held.remove(tag)
        }
    }
}
