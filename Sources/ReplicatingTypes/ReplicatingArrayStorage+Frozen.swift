/// Cold leaves: after a compaction every leaf but the first keeps its runs frozen (`FrozenRuns`,
/// a few bytes per run instead of 32) and is thawed (its runs decoded back into its run array)
/// the first time an edit or a remote operation changes it. See protocol/decisions/tombstones.md.
///
/// Rule: a frozen leaf's `runs` array is empty and its `frozen` bytes hold its runs; its content,
/// break count and place in the tree and the ID index are those of any leaf. Code that changes a
/// leaf's runs reaches it through `leafForEdit`, `locateForEdit`, `thaw` or `mergeIfSmall`, which
/// thaw it first; code that only reads runs goes through `locate`, `element`, `id(visible:inLeaf:)`
/// (which decode as they go, allocating nothing: a lookup costs what a scan of a thawed leaf's
/// runs does), `runs(of:)` (a whole leaf, for walks that visit each leaf once), `storedRun` or
/// `readable(_:)`, none of which changes anything. The first leaf is never frozen (an empty
/// first leaf means an empty array, and insertions at the start go there without a lookup).
extension ReplicatingArrayStorage {
    @inline(__always)
    func isFrozen(_ leaf: Int) -> Bool { !leaves[leaf].frozen.isEmpty }

    /// Decodes `leaf`'s runs back into its run array, if it is frozen. Changes no count, no run
    /// index and no ID index entry. - Complexity: O(runs in the leaf)
    @inline(__always)
    func thaw(_ leaf: Int) {
        if isFrozen(leaf) { thawFrozen(leaf) }
    }

    @inline(never)
    private func thawFrozen(_ leaf: Int) {
        leaves[leaf].runs = leaves[leaf].frozen.thawed()
        leaves[leaf].frozen = FrozenRuns()
        thawedCount &+= 1
    }

    /// Freezes every leaf after the first that has runs. - Complexity: O(runs)
    func freezeLeaves() {
        settleCounts()
        cursorLeaf = Self.none
        forgetRunHint()
        var leaf = self.leaf(after: Self.firstLeaf)
        while let l = leaf {
            if !leaves[l].runs.isEmpty {
                leaves[l].frozen = FrozenRuns(leaves[l].runs)
                leaves[l].runs = []
            }
            leaf = self.leaf(after: l)
        }
    }

    /// The runs of `leaf`: its array, or its frozen runs decoded (without thawing the leaf).
    @inline(__always)
    func runs(of leaf: Int) -> ContiguousArray<Run> {
        isFrozen(leaf) ? leaves[leaf].frozen.thawed() : leaves[leaf].runs
    }

    /// `leaf` as a value whose runs can be read: the leaf, or a copy with its runs decoded.
    @inline(__always)
    func readable(_ leaf: Int) -> Leaf {
        guard isFrozen(leaf) else { return leaves[leaf] }
        var copy = leaves[leaf]
        copy.runs = copy.frozen.thawed()
        return copy
    }

    /// Run `run` of `leaf`, frozen or not.
    @inline(__always)
    func storedRun(leaf: Int, run: Int) -> Run {
        isFrozen(leaf) ? leaves[leaf].frozen.thawed()[run] : leaves[leaf].runs[run]
    }

    /// Where an element is, for readers by ID (`index(of:)`, `index(after:)`): its leaf, run and
    /// offset, the run itself, the visible elements in the leaf before the run, and the leaf's
    /// number of runs; frozen leaves are decoded as they are read, without allocating.
    /// - Complexity: O(runs in one leaf)
    func element(replica: UInt16, counter: UInt64) -> (leaf: Int, run: Int, offset: Int, stored: Run, contentStart: Int, runCount: Int)? {
        guard counter < UInt64(idIndex[Int(replica)].count) else { return nil }
        let entry = Int(idIndex[Int(replica)][Int(counter)])
        guard entry < leaves.count else { return nil }
        if isFrozen(entry) {
            guard let found = leaves[entry].frozen.find(replica: replica, counter: counter) else { return nil }
            return (entry, found.index, Int(counter - found.run.counter), found.run, found.contentStart, found.runCount)
        }
        guard let run = leaves[entry].runHolding(replica: replica, counter: counter) else { return nil }
        let stored = leaves[entry].runs[run]
        return (entry, run, Int(counter - stored.counter), stored, leaves[entry].contentStart(ofRun: run), leaves[entry].runs.count)
    }

    /// The ID of visible element `index` of `leaf`, frozen or not, without allocating.
    func id(visible index: Int, inLeaf leaf: Int) -> ElementID {
        if isFrozen(leaf), let (_, offset, run) = leaves[leaf].frozen.runHolding(visible: index) {
            return ElementID(replica: replicas[Int(run.replica)], counter: run.counter + UInt64(offset))
        }
        let (run, offset, _) = leaves[leaf].runHolding(visible: index)
        return id(leaf: leaf, run: run, offset: offset)
    }

    /// `locate`, with the leaf found thawed: for code that changes it.
    @inline(__always)
    func locateForEdit(replica: UInt16, counter: UInt64) -> (leaf: Int, run: Int, offset: Int)? {
        // Found first, so that an ID dropped by compaction thaws nothing; run numbers are the
        // same in the frozen and the thawed leaf.
        guard let found = locate(replica: replica, counter: counter) else { return nil }
        thaw(found.leaf)
        return found
    }

    /// For a known counter that `locate` does not find (dropped by compaction): the end of the
    /// dropped counters from it, at most `limit`, found with one lookup and one leaf scan, so a
    /// removal naming a long dropped range does not look up each counter.
    func compactedEnd(replica: UInt16, from counter: UInt64, limit: UInt64) -> UInt64 {
        let column = idIndex[Int(replica)]
        var end = Swift.min(UInt64(column.entryEnd(holding: Int(counter))), limit)
        let entry = Int(column[Int(counter)])
        if entry < leaves.count {
            let next: UInt64?
            if isFrozen(entry) {
                next = leaves[entry].frozen.nextCounter(of: replica, after: counter)
            } else {
                var best: UInt64?
                for run in leaves[entry].runs where run.replica == replica && run.counter > counter { best = Swift.min(best ?? run.counter, run.counter) }
                next = best
            }
            if let next { end = Swift.min(end, next) }
        }
        return Swift.max(end, counter + 1)
    }

    /// Whether `a` and `b` (neighbours) may be merged: their content fits, then (both thawed, so
    /// the merge can move runs) their runs. A frozen neighbour is thawed only when the content fits.
    @inline(__always)
    func fitTogetherThawing(_ a: Int, _ b: Int) -> Bool {
        guard leaves[a].content.count + leaves[b].content.count <= Self.maxContentPerLeaf * 3 / 4 else { return false }
        thaw(a)
        thaw(b)
        return leaves[a].runs.count + leaves[b].runs.count <= Self.maxRunsPerLeaf * 3 / 4
    }
}

extension ReplicatingArrayStorage {
    /// Number of frozen leaves, for tests and statistics. - Complexity: O(leaves)
    var frozenLeafCount: Int {
        var count = 0
        var leaf: Int? = Self.firstLeaf
        while let l = leaf {
            if isFrozen(l) { count += 1 }
            leaf = self.leaf(after: l)
        }
        return count
    }
}
