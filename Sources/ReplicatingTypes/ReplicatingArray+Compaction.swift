/// Dropping tombstones: removed elements that nothing can refer to any more are deleted from
/// storage for good, keeping only the fact that their IDs were used.
///
/// Rule (the caller's to ensure, see protocol/decisions/tombstones.md): a tombstone may be dropped
/// once no replica can still send an operation anchored to it, that is, every copy that may edit
/// has seen its removal and everything anchored to it has arrived here. What is dropped stays
/// known (version vectors do not change, a removal naming it is a no-op), an insertion anchored to
/// it is refused as invalid, and the document order of everything kept is unchanged. A compacted
/// array's state must travel whole (`encodedState()` uses the document-order format then), since
/// operations anchored to dropped elements cannot be replayed elsewhere.
extension ReplicatingArray {
    /// Number of removed elements dropped by compaction over this array's life.
    public var compactedCount: Int { storage.compactedCount }

    /// Number of removed elements still stored (each kept as part of a content-less run).
    /// - Complexity: O(runs)
    public var tombstoneCount: Int {
        var count = 0
        var leaf: Int? = ReplicatingArrayStorage<Element>.firstLeaf
        while let l = leaf {
            for run in storage.runs(of: l) where run.isDeleted { count += Int(run.length) }
            leaf = storage.leaf(after: l)
        }
        return count
    }

    /// The IDs of the visible elements, as ranges in document order.
    /// - Complexity: O(runs)
    public var visibleIDs: [ElementIDRange] {
        var ranges: [ElementIDRange] = []
        storage.forEachCanonicalRun(withContent: false) { run, _ in
            if !run.isDeleted {
                ranges.append(ElementIDRange(start: ElementID(replica: storage.replicas[Int(run.replica)], counter: run.counter), count: UInt64(run.length)))
            }
        }
        return ranges
    }

    /// True when this array knew `id` but dropped it in a compaction.
    public func isCompacted(_ id: ElementID) -> Bool { storage.isCompacted(id) }

    /// Drops every stored tombstone whose ID is in `candidates` (nil: all) and not in `keep`;
    /// returns how many elements were dropped. Visible elements and the order of what stays are
    /// untouched. - Complexity: O(runs + (keep + candidates) log(keep + candidates)); storage is
    /// rebuilt (leaves repacked).
    @discardableResult
    public mutating func dropTombstones(in candidates: [ElementIDRange]? = nil, keeping keep: [ElementIDRange] = []) -> Int {
        let kept = ElementIDRangeSet(keep)
        let droppable = candidates.map(ElementIDRangeSet.init)
        let (compacted, dropped) = storage.droppingTombstones { run in
            let pieces = droppable.map { $0.intersection(of: run) } ?? [run]
            return pieces.flatMap { kept.complement(of: $0) }
        }
        if dropped > 0 { storage = compacted }
        return dropped
    }
}

extension ReplicatingArrayStorage {
    /// A copy without the parts of tombstone runs that `drop` names (given a run's IDs, the
    /// sorted pieces of it to drop), and how many elements it dropped.
    func droppingTombstones(_ drop: (ElementIDRange) -> [ElementIDRange]) -> (ReplicatingArrayStorage, dropped: Int) {
        let result = emptyCopy()
        var dropped = 0
        var runs = ContiguousArray<Run>()
        var leaf: Int? = Self.firstLeaf
        while let source = leaf {
            runs.removeAll(keepingCapacity: true)
            for run in self.runs(of: source) {
                guard run.isDeleted else {
                    runs.append(run)
                    continue
                }
                let ids = ElementIDRange(start: ElementID(replica: replicas[Int(run.replica)], counter: run.counter), count: UInt64(run.length))
                // The pieces to keep lie between the pieces to drop.
                var next = run.counter
                for piece in ElementIDRangeSet.gaps(in: ids, around: drop(ids)) {
                    dropped += Int(piece.start.counter - next)
                    var kept = run
                    kept.counter = piece.start.counter
                    kept.lamport = run.lamport + (piece.start.counter - run.counter)
                    kept.length = UInt32(piece.count)
                    if piece.start.counter > run.counter {
                        // Its predecessor in the run is gone; the anchor names it all the same.
                        kept.anchorReplica = run.replica
                        kept.anchorCounter = piece.start.counter - 1
                    }
                    runs.append(kept)
                    next = piece.counters.upperBound
                }
                dropped += Int(run.end - next)
            }
            if !runs.isEmpty { result.appendPacked(runs: runs, content: leaves[source].content) }
            leaf = self.leaf(after: source)
        }
        result.compactedCount = compactedCount + dropped
        result.fitAfterCompaction()
        return (result, dropped)
    }

    /// The last leaf in document order.
    func lastLeaf() -> Int {
        var node = Int(root)
        while !branches[node].isBottom { node = Int(branches[node].children[branches[node].children.count - 1]) }
        return Int(branches[node].children[branches[node].children.count - 1])
    }

    /// `appendBuilt`, cutting `runs` where the last leaf is full so that every leaf but the last
    /// comes out full (of runs or of content), not three quarters full on average.
    func appendPacked(runs: ContiguousArray<Run>, content: LeafContent<Element>) {
        var r = 0
        var c = 0
        while r < runs.count {
            let last = lastLeaf()
            var roomRuns = Self.maxRunsPerLeaf - leaves[last].runs.count
            var roomContent = Self.maxContentPerLeaf - leaves[last].content.count
            if roomRuns == 0 || runs[r].visibleLength > roomContent {
                // Nothing fits: the piece goes to a new leaf (`appendBuilt` makes it).
                roomRuns = Self.maxRunsPerLeaf
                roomContent = Self.maxContentPerLeaf
            }
            var end = r
            var visible = 0
            while end < runs.count, end - r < roomRuns, visible + runs[end].visibleLength <= roomContent {
                visible += runs[end].visibleLength
                end += 1
            }
            precondition(end > r, "a run larger than a leaf")
            appendBuilt(runs: runs[r..<end], content: content[c..<(c + visible)])
            r = end
            c += visible
        }
    }

    /// After a compaction built this storage: gaps of dropped counters cost the ID index no
    /// entries (`LeafIndexColumn.absorb`), and every array's room is fitted to what it holds.
    func fitAfterCompaction() {
        if compactedCount > 0 {
            for replica in idIndex.indices { idIndex[replica].absorb(Self.compactedLeaf) }
        }
        settleCounts()
        var leaf: Int? = Self.firstLeaf
        while let l = leaf {
            if leaves[l].runs.capacity > leaves[l].runs.count {
                var fitted = ContiguousArray<Run>()
                fitted.reserveCapacity(leaves[l].runs.count)
                fitted.append(contentsOf: leaves[l].runs)
                leaves[l].runs = fitted
            }
            leaves[l].content.fitCapacity()
            leaf = self.leaf(after: l)
        }
        leaves.shrinkToFit()
        branches.shrinkToFit()
        freezeLeaves()
    }
}
