/// A set whose elements can be added and removed on any replica (a last-writer-wins element set).
///
/// Model: every element ever seen keeps an entry (present or removed, i.e. a tombstone) stamped
/// with the Lamport timestamp of its last add or remove.
/// Guarantees: for each element, the operation with the larger timestamp wins on every replica; a
/// remove only hides what it saw, because a concurrent re-add with a later timestamp wins.
public struct ReplicatingSet<Element: Hashable> {
    struct Entry: Hashable {
        var isPresent: Bool
        var timestamp: LamportTimestamp
    }

    private(set) var entries: [Element: Entry] = [:]
    private(set) var clock: UInt64 = 0
    /// The replica that makes this copy's local changes; not part of the replicated state.
    public var replica: ReplicaID

    public init(replica: ReplicaID) {
        self.replica = replica
    }

    public init<S: Sequence>(_ elements: S, replica: ReplicaID) where S.Element == Element {
        self.replica = replica
        for element in elements { insert(element) }
    }

    /// The elements currently present.
    /// - Complexity: O(n) where n counts tombstones too.
    public var values: Set<Element> {
        Set(entries.lazy.filter { $0.value.isPresent }.map(\.key))
    }

    public func contains(_ element: Element) -> Bool { entries[element]?.isPresent ?? false }

    public var count: Int { entries.values.reduce(0) { $0 + ($1.isPresent ? 1 : 0) } }

    /// - Complexity: O(1) amortized
    public mutating func insert(_ element: Element) {
        write(element, isPresent: true)
    }

    /// Removes `element`, leaving a tombstone so the removal replicates.
    /// - Complexity: O(1) amortized
    public mutating func remove(_ element: Element) {
        guard entries[element] != nil else { return }
        write(element, isPresent: false)
    }

    private mutating func write(_ element: Element, isPresent: Bool) {
        clock += 1
        entries[element] = Entry(isPresent: isPresent, timestamp: LamportTimestamp(counter: clock, replica: replica))
    }
}

extension ReplicatingSet: Replicable {
    public func merged(with other: ReplicatingSet) -> ReplicatingSet {
        var result = self
        result.clock = Swift.max(clock, other.clock)
        result.entries.merge(other.entries) { mine, theirs in theirs.timestamp > mine.timestamp ? theirs : mine }
        return result
    }
}

extension ReplicatingSet: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.entries == rhs.entries }
}

extension ReplicatingSet: Sendable where Element: Sendable {}

extension ReplicatingSet: Codable where Element: Codable {
    private struct CodedEntry: Codable {
        var element: Element
        var isPresent: Bool
        var timestamp: LamportTimestamp
    }

    private enum CodingKeys: String, CodingKey { case replica, clock, entries }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        replica = try container.decode(ReplicaID.self, forKey: .replica)
        clock = try container.decode(UInt64.self, forKey: .clock)
        for coded in try container.decode([CodedEntry].self, forKey: .entries) {
            entries[coded.element] = Entry(isPresent: coded.isPresent, timestamp: coded.timestamp)
            clock = Swift.max(clock, coded.timestamp.counter)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(replica, forKey: .replica)
        try container.encode(clock, forKey: .clock)
        let coded = entries.map { CodedEntry(element: $0.key, isPresent: $0.value.isPresent, timestamp: $0.value.timestamp) }
            .sorted { $0.timestamp < $1.timestamp }
        try container.encode(coded, forKey: .entries)
    }
}
