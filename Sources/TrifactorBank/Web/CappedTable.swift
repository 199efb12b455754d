/// A dictionary whose capped entries number at most `capacity`: inserting
/// one more drops the oldest capped entry (the first inserted). Uncapped
/// entries are never dropped for room. Insertion is O(1) amortized and
/// never scans the table; `removeAll(where:)` (the background sweep) is the
/// only linear pass. Not thread-safe: the owner keeps it behind a lock.
struct CappedTable<Value> {
    private struct Entry {
        var value: Value
        let capped: Bool
        /// Its place in `order` (a key inserted again gets a new one).
        let serial: Int
    }

    private var entries: [String: Entry] = [:]
    /// Keys of capped entries, oldest first, from `head` on; keys removed
    /// since are skipped when reached (each is passed once) and dropped by the sweep.
    private var order: [(key: String, serial: Int)] = []
    private var head = 0
    private var serial = 0
    /// The capped entries held now.
    private(set) var cappedCount = 0
    /// The most capped entries held at once.
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// All entries held now.
    var count: Int { entries.count }

    subscript(_ key: String) -> Value? { entries[key]?.value }

    /// Replaces the value under `key`, keeping its place; nothing when `key` is absent.
    mutating func update(_ key: String, _ value: Value) {
        entries[key]?.value = value
    }

    /// Inserts `value` under `key` (as the newest), dropping the oldest capped entries past `capacity`.
    mutating func insert(_ key: String, _ value: Value, capped: Bool) {
        serial += 1
        if let old = entries.updateValue(Entry(value: value, capped: capped, serial: serial), forKey: key), old.capped {
            cappedCount -= 1
        }
        guard capped else { return }
        cappedCount += 1
        order.append((key, serial))
        while cappedCount > capacity, head < order.count {
            let oldest = order[head]
            head += 1
            if let entry = entries[oldest.key], entry.capped, entry.serial == oldest.serial {
                entries[oldest.key] = nil
                cappedCount -= 1
            }
        }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// Removes and returns the value under `key`.
    @discardableResult
    mutating func remove(_ key: String) -> Value? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        if entry.capped { cappedCount -= 1 }
        return entry.value
    }

    /// Removes every entry whose value matches (and forgets the removed keys' places); how many went.
    @discardableResult
    mutating func removeAll(where drop: (Value) -> Bool) -> Int {
        let before = entries.count
        entries = entries.filter { !drop($0.value.value) }
        cappedCount = entries.values.count(where: \.capped)
        order = order[head...].filter { place in
            entries[place.key].map { $0.capped && $0.serial == place.serial } ?? false
        }
        head = 0
        return before - entries.count
    }
}
