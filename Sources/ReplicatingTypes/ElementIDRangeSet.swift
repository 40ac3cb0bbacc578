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
        Self.intersection(of: range.counters, with: ranges[range.start.replica] ?? []).map {
            ElementIDRange(start: ElementID(replica: range.start.replica, counter: $0.lowerBound), count: UInt64($0.count))
        }
    }

    /// The parts of `range` not in this set, in order.
    public func complement(of range: ElementIDRange) -> [ElementIDRange] {
        Self.gaps(in: range, around: intersection(of: range))
    }

    /// Whether any of `ids` is in this set.
    public func intersects(_ ids: [ElementIDRange]) -> Bool {
        ids.contains { !intersection(of: $0).isEmpty }
    }

    /// The parts of `range` outside `pieces` (sorted, disjoint, within `range`), in order.
    static func gaps(in range: ElementIDRange, around pieces: [ElementIDRange]) -> [ElementIDRange] {
        var gaps: [ElementIDRange] = []
        var next = range.start.counter
        for piece in pieces {
            if piece.start.counter > next {
                gaps.append(ElementIDRange(start: ElementID(replica: range.start.replica, counter: next), count: piece.start.counter - next))
            }
            next = piece.counters.upperBound
        }
        if next < range.counters.upperBound {
            gaps.append(ElementIDRange(start: ElementID(replica: range.start.replica, counter: next), count: range.counters.upperBound - next))
        }
        return gaps
    }

    /// The parts of `range` inside the sorted, disjoint `ranges`, in order.
    private static func intersection(of range: Range<UInt64>, with ranges: [Range<UInt64>]) -> [Range<UInt64>] {
        guard !ranges.isEmpty else { return [] }
        // The first range that ends after `range` starts.
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].upperBound <= range.lowerBound { low = mid + 1 } else { high = mid }
        }
        var pieces: [Range<UInt64>] = []
        var i = low
        while i < ranges.count, ranges[i].lowerBound < range.upperBound {
            pieces.append(Swift.max(ranges[i].lowerBound, range.lowerBound)..<Swift.min(ranges[i].upperBound, range.upperBound))
            i += 1
        }
        return pieces
    }
}
