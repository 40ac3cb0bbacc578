/// What a batch of operations from elsewhere could make an array hold, worked out before any of
/// it is applied, so a caller can refuse a batch that claims more than it can absorb.
///
/// Counters of one replica are contiguous (an insertion at counter `c` waits until counters
/// `0..<c` arrived), so an insertion ending at counter `e` commits the array to holding `e`
/// elements of its replica once it applies, whatever its content: a run of removed elements costs
/// as much as visible text, and a lying counter costs as much as the elements it skips.
/// Operations already waiting in the array count as claimed too.
public struct ReplicatingArrayGrowth: Equatable, Sendable {
    /// Elements (visible, removed or compacted, of every replica) the array would hold.
    public var totalElements: UInt64 = 0
    /// Of those, the ones only this batch claims.
    public var newElements: UInt64 = 0
    /// Replicas the array would record (elements or waiting insertions of its own).
    public var totalReplicas = 0
    /// Of those, the ones only this batch names.
    public var newReplicas = 0
    /// The largest Lamport counter the batch's insertions would use (0 when none).
    public var lamportEnd: UInt64 = 0

    public init() {}
}

extension ReplicatingArray {
    /// The largest Lamport counter this copy has seen or issued (its Lamport clock): the next
    /// local insertion uses the one after it.
    public var lamportClock: UInt64 { storage.maxLamport }

    /// Whether a local insertion of `count` elements still has Lamport counters left; when not,
    /// `insert` changes nothing and returns nil, never overflowing.
    public func canInsertLocally(count: Int) -> Bool {
        count >= 0 && storage.maxLamport < UInt64.max - UInt64(count)
    }

    /// Elements this copy holds or is committed to holding: visible, removed or compacted, of
    /// every replica, and those its waiting insertions claim. The `totalElements` of
    /// `growth(from: [])`, without building anything: what a local edit is checked against
    /// (each element a local insertion adds is a new one, so the copy then holds this many
    /// plus the elements inserted, as any peer applying those insertions counts them).
    /// - Complexity: O(replicas), plus O(replicas + waiting insertions) when insertions wait
    public var claimedElementCount: UInt64 {
        guard storage.pendingInsertions.isEmpty else { return growth(from: EmptyCollection()).totalElements }
        var total: UInt64 = 0
        for replica in storage.idIndex.indices { total = Self.saturatingAdd(total, UInt64(storage.idIndex[replica].count)) }
        return total
    }

    /// What applying `operations` could make this array hold (see `ReplicatingArrayGrowth`).
    /// Counter arithmetic saturates, so lying counts give huge numbers, never a trap.
    /// - Complexity: O(operations + insertions waiting here + replicas)
    public func growth(from operations: some Sequence<ReplicatingArrayOperation<Element>>) -> ReplicatingArrayGrowth {
        var claimed: [ReplicaID: UInt64] = [:]
        for (i, replica) in storage.replicas.enumerated() { claimed[replica] = UInt64(storage.idIndex[i].count) }
        for insertion in storage.pendingInsertions {
            let end = Self.saturatingEnd(insertion.id.counter, insertion.count)
            claimed[insertion.id.replica] = Swift.max(claimed[insertion.id.replica] ?? 0, end)
        }
        var growth = ReplicatingArrayGrowth()
        var before: UInt64 = 0
        for count in claimed.values { before = Self.saturatingAdd(before, count) }
        let replicasBefore = claimed.count
        var after = claimed
        for case .insert(let insertion) in operations {
            let end = Self.saturatingEnd(insertion.id.counter, insertion.count)
            after[insertion.id.replica] = Swift.max(after[insertion.id.replica] ?? 0, end)
            if insertion.count > 0 { growth.lamportEnd = Swift.max(growth.lamportEnd, Self.saturatingEnd(insertion.lamport, insertion.count - 1)) }
        }
        for count in after.values { growth.totalElements = Self.saturatingAdd(growth.totalElements, count) }
        growth.newElements = growth.totalElements - Swift.min(before, growth.totalElements)
        growth.totalReplicas = after.count
        growth.newReplicas = after.count - replicasBefore
        return growth
    }

    @inline(__always)
    static func saturatingAdd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    @inline(__always)
    static func saturatingEnd(_ start: UInt64, _ count: Int) -> UInt64 { saturatingAdd(start, UInt64(Swift.max(0, count))) }
}
