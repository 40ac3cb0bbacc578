extension ReplicatingArray {
    /// The operations another copy with version vector `version` lacks: every insertion it has not
    /// seen (tombstones travel as counts, without content), in causal order, then this copy's whole
    /// removal set as one compact `.remove` (removals are idempotent, so resending is harmless).
    /// - Complexity: O(runs + k log k) for k runs to send
    ///
    /// Prespecialized for text, so a generic call from another module reaches code compiled for
    /// scalars (cross-module optimization does not always specialize it there).
    @_specialize(exported: true, where Element == Unicode.Scalar)
    public func operations(since version: VersionVector = VersionVector()) -> [ReplicatingArrayOperation<Element>] {
        let s = storage
        let (insertions, removedRuns) = s.insertionsAndRemovals(since: s.replicas.map { version[$0] })
        var removed = removedRuns
        // Lamport order is a causal order: an anchor, and a replica's earlier runs, come first.
        // The first timestamps are sorted, not the insertions (which would be moved, and their
        // content counted, at each step); they differ, so the order is total.
        var order: [InsertionOrderKey] = []
        order.reserveCapacity(insertions.count)
        for i in insertions.indices { order.append(InsertionOrderKey(lamport: insertions[i].lamport, replica: insertions[i].id.replica.rawValue, index: i)) }
        order.sort()
        var operations: [ReplicatingArrayOperation<Element>] = []
        operations.reserveCapacity(insertions.count + s.pendingInsertions.count + 1)
        for key in order { operations.append(.insert(insertions[key.index])) }
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

/// An insertion's first timestamp (Lamport counter, then replica) and its place in a list: what
/// `operations(since:)` sorts.
struct InsertionOrderKey: Comparable {
    var lamport: UInt64
    var replica: UInt64
    var index: Int

    static func < (a: InsertionOrderKey, b: InsertionOrderKey) -> Bool {
        a.lamport != b.lamport ? a.lamport < b.lamport : a.replica < b.replica
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

    /// For `operations(since:)`: each maximal run (as `forEachCanonicalRun` finds them) that a
    /// copy having `have[r]` elements of each replica `r` (by local index) lacks, or lacks the end
    /// of, as an insertion of what it lacks, in document order; and every removed maximal run.
    /// Content is copied only for the insertions (a catch-up sends a few runs of a long history).
    /// - Complexity: O(runs + elements sent)
    func insertionsAndRemovals(since have: [UInt64]) -> ([ReplicatingArrayInsertion<Element>], [ElementIDRange]) {
        var insertions: [ReplicatingArrayInsertion<Element>] = []
        var removed: [ElementIDRange] = []
        var pending: Run?
        // Where the pending run's visible elements are: (leaf, first element, count) per leaf.
        var pieces: [(leaf: Int, start: Int, count: Int)] = []
        var leaf: Int? = Self.firstLeaf
        while let l = leaf {
            var contentIndex = 0
            for run in runs(of: l) {
                if var p = pending, Self.continues(p, run) {
                    p.length += run.length
                    pending = p
                } else {
                    if let p = pending { appendCanonical(p, pieces: pieces, have: have, to: &insertions, removed: &removed) }
                    pending = run
                    pieces.removeAll(keepingCapacity: true)
                }
                if !run.isDeleted { pieces.append((l, contentIndex, Int(run.length))) }
                contentIndex += run.visibleLength
            }
            leaf = self.leaf(after: l)
        }
        if let p = pending { appendCanonical(p, pieces: pieces, have: have, to: &insertions, removed: &removed) }
        return (insertions, removed)
    }

    /// `insertionsAndRemovals`' step for one maximal run `p`, its content at `pieces`.
    func appendCanonical(_ p: Run, pieces: [(leaf: Int, start: Int, count: Int)], have: [UInt64],
                                 to insertions: inout [ReplicatingArrayInsertion<Element>], removed: inout [ElementIDRange]) {
        let replica = replicas[Int(p.replica)]
        if p.isDeleted { removed.append(ElementIDRange(start: ElementID(replica: replica, counter: p.counter), count: UInt64(p.length))) }
        let known = have[Int(p.replica)]
        guard p.end > known else { return }
        let content: ReplicatingArrayInsertion<Element>.Content
        if p.isDeleted {
            content = .removed(count: Int(p.length))
        } else if pieces.count == 1 {
            content = .elements(InsertedElements(leaves[pieces[0].leaf].content[pieces[0].start..<(pieces[0].start + pieces[0].count)]))
        } else {
            var elements: [Element] = []
            elements.reserveCapacity(Int(p.length))
            for piece in pieces { elements.append(contentsOf: leaves[piece.leaf].content[piece.start..<(piece.start + piece.count)]) }
            content = .elements(InsertedElements(elements))
        }
        let insertion = ReplicatingArrayInsertion(id: ElementID(replica: replica, counter: p.counter), lamport: p.lamport, anchor: anchor(of: p), content: content)
        insertions.append(known > p.counter ? insertion.droppingFirst(Int(known - p.counter)) : insertion)
    }
}
