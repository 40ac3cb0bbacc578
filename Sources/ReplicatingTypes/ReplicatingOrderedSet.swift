/// An ordered collection of distinct elements that replicas can insert, move and remove
/// concurrently.
///
/// Model: membership is a last-writer-wins entry per element (like `ReplicatingSet`), and each
/// element's place is a last-writer-wins `FractionalPosition`. The order is by position, ties broken
/// by the timestamp of the position write.
/// Guarantees: identity is the element itself, so concurrent moves of one element never duplicate
/// it (the later move wins on every replica); merge is commutative, associative and idempotent.
public struct ReplicatingOrderedSet<Element: Hashable> {
    struct Entry: Hashable {
        var isPresent: Bool
        var presenceStamp: LamportTimestamp
        var position: FractionalPosition
        var positionStamp: LamportTimestamp
    }

    private(set) var entries: [Element: Entry] = [:]
    private(set) var clock: UInt64 = 0
    /// The replica that makes this copy's local changes; not part of the replicated state.
    public var replica: ReplicaID

    public init(replica: ReplicaID) {
        self.replica = replica
    }

    /// The present elements in order.
    /// - Complexity: O(n log n), n counting removed entries too.
    public var values: [Element] {
        entries.filter { $0.value.isPresent }
            .sorted { a, b in
                a.value.position != b.value.position
                    ? a.value.position < b.value.position : a.value.positionStamp < b.value.positionStamp
            }
            .map(\.key)
    }

    public var count: Int { entries.values.reduce(0) { $0 + ($1.isPresent ? 1 : 0) } }

    public func contains(_ element: Element) -> Bool { entries[element]?.isPresent ?? false }

    /// Inserts `element` at `index` of `values`; an element already present is moved there instead.
    /// - Complexity: O(n log n)
    public mutating func insert(_ element: Element, at index: Int) {
        let position = positionForInsert(at: index, excluding: element)
        let stamp = tick()
        let previous = entries[element]
        entries[element] = Entry(
            isPresent: true, presenceStamp: previous?.isPresent == true ? previous!.presenceStamp : stamp,
            position: position, positionStamp: stamp)
    }

    public mutating func append(_ element: Element) {
        insert(element, at: count)
    }

    /// Moves a present element to `index` of `values` (counted without the element itself).
    public mutating func move(_ element: Element, to index: Int) {
        guard contains(element) else { return }
        insert(element, at: index)
    }

    public mutating func remove(_ element: Element) {
        guard var entry = entries[element], entry.isPresent else { return }
        entry.isPresent = false
        entry.presenceStamp = tick()
        entries[element] = entry
    }

    private mutating func tick() -> LamportTimestamp {
        clock += 1
        return LamportTimestamp(counter: clock, replica: replica)
    }

    private func positionForInsert(at index: Int, excluding element: Element) -> FractionalPosition {
        let order = values.filter { $0 != element }
        let clamped = Swift.min(Swift.max(index, 0), order.count)
        let lower = clamped > 0 ? entries[order[clamped - 1]]?.position : nil
        var upper = clamped < order.count ? entries[order[clamped]]?.position : nil
        // Equal neighbours (concurrent inserts at one spot) leave no room between them: go after both.
        if let l = lower, let u = upper, !(l < u) { upper = nil }
        return FractionalPosition.between(lower, upper)
    }
}

extension ReplicatingOrderedSet: Replicable {
    public func merged(with other: ReplicatingOrderedSet) -> ReplicatingOrderedSet {
        var result = self
        result.clock = Swift.max(clock, other.clock)
        result.entries.merge(other.entries) { mine, theirs in
            var entry = mine
            if theirs.presenceStamp > mine.presenceStamp {
                entry.isPresent = theirs.isPresent
                entry.presenceStamp = theirs.presenceStamp
            }
            if theirs.positionStamp > mine.positionStamp {
                entry.position = theirs.position
                entry.positionStamp = theirs.positionStamp
            }
            return entry
        }
        return result
    }
}

extension ReplicatingOrderedSet: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.entries == rhs.entries }
}

extension ReplicatingOrderedSet: Sendable where Element: Sendable {}

extension ReplicatingOrderedSet: Codable where Element: Codable {
    private struct CodedEntry: Codable {
        var element: Element
        var isPresent: Bool
        var presenceStamp: LamportTimestamp
        var position: FractionalPosition
        var positionStamp: LamportTimestamp
    }

    private enum CodingKeys: String, CodingKey { case replica, clock, entries }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        replica = try container.decode(ReplicaID.self, forKey: .replica)
        clock = try container.decode(UInt64.self, forKey: .clock)
        for c in try container.decode([CodedEntry].self, forKey: .entries) {
            entries[c.element] = Entry(isPresent: c.isPresent, presenceStamp: c.presenceStamp, position: c.position, positionStamp: c.positionStamp)
            clock = Swift.max(clock, c.presenceStamp.counter, c.positionStamp.counter)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(replica, forKey: .replica)
        try container.encode(clock, forKey: .clock)
        let coded = entries.map {
            CodedEntry(element: $0.key, isPresent: $0.value.isPresent, presenceStamp: $0.value.presenceStamp, position: $0.value.position, positionStamp: $0.value.positionStamp)
        }.sorted { $0.positionStamp < $1.positionStamp }
        try container.encode(coded, forKey: .entries)
    }
}
