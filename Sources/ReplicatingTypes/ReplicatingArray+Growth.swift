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
    /// Counter arithmetic saturates, so lying counts give huge numbers, never a trap. Only the
    /// replicas the batch names are looked up (a frame of one keystroke in a document of a
    /// thousand replicas builds nothing per replica); the elements held before are summed.
    /// - Complexity: O(operations + replicas + insertions waiting here), with O(1) work per
    ///   replica (one addition)
    public func growth(from operations: some Sequence<ReplicatingArrayOperation<Element>>) -> ReplicatingArrayGrowth {
        let s = storage
        // What waiting insertions claim beyond the elements known, by replica (usually nothing).
        var waiting: [ReplicaID: UInt64] = [:]
        for insertion in s.pendingInsertions {
            let end = Self.saturatingEnd(insertion.id.counter, insertion.count)
            waiting[insertion.id.replica] = Swift.max(waiting[insertion.id.replica] ?? 0, end)
        }
        var before: UInt64 = 0
        for replica in s.idIndex.indices { before = Self.saturatingAdd(before, UInt64(s.idIndex[replica].count)) }
        var replicasBefore = s.replicas.count
        for (replica, end) in waiting {
            if s.index(of: replica) == nil { replicasBefore += 1 }
            let known = s.known(replica)
            if end > known { before = Self.saturatingAdd(before, end - known) }
        }
        /// What `replica` claims before the batch, and whether it is new to this array.
        func claimed(_ replica: ReplicaID) -> (UInt64, isNew: Bool) {
            let pending = waiting[replica]
            let isNew = pending == nil && s.index(of: replica) == nil
            return (Swift.max(s.known(replica), pending ?? 0), isNew)
        }
        var growth = ReplicatingArrayGrowth()
        // The replicas the batch names: the first one without building anything, the rest by replica.
        var first: (replica: ReplicaID, before: UInt64, after: UInt64, isNew: Bool)?
        var others: [ReplicaID: (before: UInt64, after: UInt64, isNew: Bool)] = [:]
        for case .insert(let insertion) in operations {
            let replica = insertion.id.replica
            let end = Self.saturatingEnd(insertion.id.counter, insertion.count)
            if insertion.count > 0 { growth.lamportEnd = Swift.max(growth.lamportEnd, Self.saturatingEnd(insertion.lamport, insertion.count - 1)) }
            if let f = first, f.replica == replica {
                first?.after = Swift.max(f.after, end)
            } else if first == nil {
                let (was, isNew) = claimed(replica)
                first = (replica, was, Swift.max(was, end), isNew)
            } else if let other = others[replica] {
                others[replica]?.after = Swift.max(other.after, end)
            } else {
                let (was, isNew) = claimed(replica)
                others[replica] = (was, Swift.max(was, end), isNew)
            }
        }
        var added: UInt64 = 0
        var newReplicas = 0
        if let f = first {
            added = f.after - f.before
            if f.isNew { newReplicas += 1 }
        }
        for other in others.values {
            added = Self.saturatingAdd(added, other.after - other.before)
            if other.isNew { newReplicas += 1 }
        }
        growth.totalElements = Self.saturatingAdd(before, added)
        growth.newElements = growth.totalElements - Swift.min(before, growth.totalElements)
        growth.totalReplicas = replicasBefore + newReplicas
        growth.newReplicas = newReplicas
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
