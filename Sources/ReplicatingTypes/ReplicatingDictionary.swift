/// A key-value map replicated per key: each key's value is last-writer-wins, except that when the
/// value type is itself `Replicable`, two values for one key are merged recursively.
///
/// Model: every key ever written keeps an entry (its value, a removed flag, and the Lamport
/// timestamp of the last write or removal); removed entries are tombstones.
/// Guarantees: merge is commutative, associative and idempotent per key, so the whole map is; a
/// concurrent edit to a nested replicated value is never lost to a sibling's write of the same key.
public struct ReplicatingDictionary<Key: Hashable, Value> {
    struct Entry {
        var value: Value
        var isRemoved: Bool
        var timestamp: LamportTimestamp
    }

    private(set) var entries: [Key: Entry] = [:]
    private(set) var clock: UInt64 = 0
    /// The replica that makes this copy's local changes; not part of the replicated state.
    public var replica: ReplicaID

    public init(replica: ReplicaID) {
        self.replica = replica
    }

    /// The value for `key`; setting nil removes the key (leaving a tombstone). A set is dropped,
    /// changing nothing, when the clock has no timestamp left (see `set(_:forKey:)`).
    /// - Complexity: O(1) amortized
    public subscript(key: Key) -> Value? {
        get {
            guard let entry = entries[key], !entry.isRemoved else { return nil }
            return entry.value
        }
        set { set(newValue, forKey: key) }
    }

    /// Writes `value` for `key` (nil removes it) with a timestamp newer than any this copy has seen;
    /// returns false, changing nothing, when the clock has none left (merged from a copy that used
    /// `UInt64.max`): no trap, no wrap-around.
    /// - Complexity: O(1) amortized
    @discardableResult
    public mutating func set(_ value: Value?, forKey key: Key) -> Bool {
        guard clock < .max else { return false }
        clock += 1
        let stamp = LamportTimestamp(counter: clock, replica: replica)
        if let value {
            entries[key] = Entry(value: value, isRemoved: false, timestamp: stamp)
        } else if var entry = entries[key] {
            entry.isRemoved = true
            entry.timestamp = stamp
            entries[key] = entry
        }
        return true
    }

    public var keys: [Key] { entries.filter { !$0.value.isRemoved }.map(\.key) }

    public var count: Int { entries.values.reduce(0) { $0 + ($1.isRemoved ? 0 : 1) } }

    public var dictionary: [Key: Value] { entries.filter { !$0.value.isRemoved }.mapValues(\.value) }
}

extension ReplicatingDictionary: Replicable {
    public func merged(with other: ReplicatingDictionary) -> ReplicatingDictionary {
        var result = self
        result.clock = Swift.max(clock, other.clock)
        result.entries.merge(other.entries) { mine, theirs in
            let newer = theirs.timestamp > mine.timestamp ? theirs : mine
            guard let value = Self.mergeIfReplicable(mine.value, theirs.value) else { return newer }
            return Entry(value: value, isRemoved: newer.isRemoved, timestamp: newer.timestamp)
        }
        return result
    }

    /// The recursive merge of two values when `Value` is `Replicable`, else nil.
    private static func mergeIfReplicable(_ a: Value, _ b: Value) -> Value? {
        guard let replicable = a as? any Replicable else { return nil }
        return mergeOpened(replicable, b)
    }

    private static func mergeOpened<R: Replicable>(_ a: R, _ b: Value) -> Value? {
        guard let other = b as? R else { return nil }
        return a.merged(with: other) as? Value
    }
}

extension ReplicatingDictionary.Entry: Equatable where Value: Equatable {}

extension ReplicatingDictionary: Equatable where Value: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.entries == rhs.entries }
}

extension ReplicatingDictionary: Sendable where Key: Sendable, Value: Sendable {}
extension ReplicatingDictionary.Entry: Sendable where Value: Sendable {}

extension ReplicatingDictionary: Codable where Key: Codable, Value: Codable {
    private struct CodedEntry: Codable {
        var key: Key
        var value: Value
        var isRemoved: Bool
        var timestamp: LamportTimestamp
    }

    private enum CodingKeys: String, CodingKey { case replica, clock, entries }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        replica = try container.decode(ReplicaID.self, forKey: .replica)
        clock = try container.decode(UInt64.self, forKey: .clock)
        for coded in try container.decode([CodedEntry].self, forKey: .entries) {
            entries[coded.key] = Entry(value: coded.value, isRemoved: coded.isRemoved, timestamp: coded.timestamp)
            clock = Swift.max(clock, coded.timestamp.counter)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(replica, forKey: .replica)
        try container.encode(clock, forKey: .clock)
        let coded = entries.map { CodedEntry(key: $0.key, value: $0.value.value, isRemoved: $0.value.isRemoved, timestamp: $0.value.timestamp) }
            .sorted { $0.timestamp < $1.timestamp }
        try container.encode(coded, forKey: .entries)
    }
}
