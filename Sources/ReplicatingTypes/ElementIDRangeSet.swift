/// A set of element IDs held as sorted, disjoint counter ranges per replica, for questions
/// about many IDs at once (which tombstones to drop, whether a copy shows any of them).
public struct ElementIDRangeSet: Sendable {
    private var ranges: [ReplicaID: [Range<UInt64>]] = [:]

    public init(_ ids: [ElementIDRange]) {
        for range in ReplicatingArray<UInt8>.coalesced(ids) { ranges[range.start.replica, default: []].append(range.counters) }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// The parts of `range` in this set, in order.
    public func intersection(of range: ElementIDRange) -> [ElementIDRange] {
        ReplicatingArrayStorage<UInt8>.intersection(of: range.counters, with: ranges[range.start.replica] ?? []).map {
            ElementIDRange(start: ElementID(replica: range.start.replica, counter: $0.lowerBound), count: UInt64($0.count))
        }
    }

    /// The parts of `range` not in this set, in order.
    public func complement(of range: ElementIDRange) -> [ElementIDRange] {
        var pieces: [ElementIDRange] = []
        var next = range.start.counter
        for inside in intersection(of: range) {
            if inside.start.counter > next {
                pieces.append(ElementIDRange(start: ElementID(replica: range.start.replica, counter: next), count: inside.start.counter - next))
            }
            next = inside.counters.upperBound
        }
        if next < range.counters.upperBound {
            pieces.append(ElementIDRange(start: ElementID(replica: range.start.replica, counter: next), count: range.counters.upperBound - next))
        }
        return pieces
    }

    /// Whether any of `ids` is in this set.
    public func intersects(_ ids: [ElementIDRange]) -> Bool {
        ids.contains { !intersection(of: $0).isEmpty }
    }
}
