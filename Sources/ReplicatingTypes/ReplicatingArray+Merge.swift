extension ReplicatingArray {
    /// The operations another copy with version vector `version` lacks: every insertion it has not
    /// seen (tombstones travel as counts, without content), in causal order, then this copy's whole
    /// removal set as one compact `.remove` (removals are idempotent, so resending is harmless).
    /// - Complexity: O(runs + k log k) for k runs to send
    public func operations(since version: VersionVector = VersionVector()) -> [ReplicatingArrayOperation<Element>] {
        let s = storage
        var insertions: [ReplicatingArrayInsertion<Element>] = []
        var removed: [ElementIDRange] = []
        s.forEachCanonicalRun { run, content in
            let replica = s.replicas[Int(run.replica)]
            if run.isDeleted { removed.append(ElementIDRange(start: ElementID(replica: replica, counter: run.counter), count: UInt64(run.length))) }
            let have = version[replica]
            guard run.end > have else { return }
            let skip = Int(have > run.counter ? have - run.counter : 0)
            let insertion = ReplicatingArrayInsertion(
                id: ElementID(replica: replica, counter: run.counter), lamport: run.lamport, anchor: s.anchor(of: run),
                content: run.isDeleted ? .removed(count: Int(run.length)) : .elements(InsertedElements(content)))
            insertions.append(skip > 0 ? insertion.droppingFirst(skip) : insertion)
        }
        // Lamport order is a causal order: an anchor, and a replica's earlier runs, come first.
        insertions.sort { $0.timestamp < $1.timestamp }
        var operations = insertions.map { ReplicatingArrayOperation.insert($0) }
        operations.append(contentsOf: s.pendingInsertions.map { .insert($0) })
        for (replica, ranges) in s.pendingRemovals {
            removed.append(contentsOf: ranges.map { ElementIDRange(start: ElementID(replica: replica, counter: $0.lowerBound), count: UInt64($0.count)) })
        }
        if !removed.isEmpty { operations.append(.remove(ElementIDRanges(Self.coalesced(removed)))) }
        return operations
    }

    /// The IDs of all removed elements, as sorted, coalesced ranges.
    public var removedIDs: [ElementIDRange] {
        var removed: [ElementIDRange] = []
        storage.forEachCanonicalRun(withContent: false) { run, _ in
            if run.isDeleted {
                removed.append(ElementIDRange(start: ElementID(replica: storage.replicas[Int(run.replica)], counter: run.counter), count: UInt64(run.length)))
            }
        }
        return Self.coalesced(removed)
    }

    static func coalesced(_ ranges: [ElementIDRange]) -> [ElementIDRange] {
        var result: [ElementIDRange] = []
        for range in ranges.sorted(by: { $0.start < $1.start }) where range.count > 0 {
            if let last = result.last, last.start.replica == range.start.replica, last.counters.upperBound >= range.start.counter {
                let end = Swift.max(last.counters.upperBound, range.counters.upperBound)
                result[result.count - 1].count = end - last.start.counter
            } else {
                result.append(range)
            }
        }
        return result
    }
}

extension ReplicatingArray: Replicable {
    /// The state holding everything either copy holds; keeps this copy's local replica.
    /// - Complexity: O(n + m log m) for m runs the other copy has that this one lacks
    public func merged(with other: ReplicatingArray) -> ReplicatingArray {
        var result = self
        result.apply(contentsOf: other.operations(since: versionVector))
        return result
    }
}

extension ReplicatingArray: Equatable where Element: Equatable {
    /// Equal replicated state: the same elements (tombstones included) in the same order, the
    /// same removals, the same content. Leaf layout and run fragmentation do not matter.
    public static func == (lhs: ReplicatingArray, rhs: ReplicatingArray) -> Bool {
        if lhs.storage === rhs.storage { return true }
        guard lhs.count == rhs.count, lhs.versionVector == rhs.versionVector else { return false }
        return lhs.canonicalRuns() == rhs.canonicalRuns() && lhs.elements == rhs.elements
    }
}

extension ReplicatingArray {
    /// Maximal runs in document order as (first ID, length, removed): the replicated structure
    /// independent of storage layout.
    func canonicalRuns() -> [CanonicalRun] {
        var result: [CanonicalRun] = []
        storage.forEachCanonicalRun(withContent: false) { run, _ in
            result.append(CanonicalRun(start: ElementID(replica: storage.replicas[Int(run.replica)], counter: run.counter),
                                       length: run.length, isDeleted: run.isDeleted))
        }
        return result
    }

    struct CanonicalRun: Equatable {
        var start: ElementID
        var length: UInt32
        var isDeleted: Bool
    }
}

extension ReplicatingArrayStorage {
    /// Calls `body` with each maximal run in document order (adjacent records that continue each
    /// other joined, across leaves too) and, `withContent`, the content of its elements (empty
    /// for tombstones; always empty without `withContent`, which copies nothing).
    func forEachCanonicalRun(withContent: Bool = true, _ body: (Run, [Element]) -> Void) {
        var pending: Run?
        var content: [Element] = []
        var leaf: Int? = Self.firstLeaf
        while let l = leaf {
            var contentIndex = 0
            for run in runs(of: l) {
                let runContent = run.isDeleted || !withContent ? [] : Array(leaves[l].content[contentIndex..<(contentIndex + Int(run.length))])
                contentIndex += run.visibleLength
                if var p = pending, Self.continues(p, run) {
                    p.length += run.length
                    pending = p
                    content.append(contentsOf: runContent)
                } else {
                    if let p = pending { body(p, content) }
                    pending = run
                    content = runContent
                }
            }
            leaf = self.leaf(after: l)
        }
        if let p = pending { body(p, content) }
    }
}
