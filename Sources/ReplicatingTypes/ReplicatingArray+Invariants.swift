extension ReplicatingArray {
    /// Checks the numbered invariants of `ReplicatingArray`; traps with a description on the first
    /// violation. O(n); for tests and debugging. Returns the number of runs checked.
    @discardableResult
    public func _checkInvariants() -> Int {
        storage.checkInvariants()
    }
}

extension ReplicatingArrayStorage {
    func checkInvariants() -> Int {
        // 1. Counts, depth and leaf order.
        var leavesInTreeOrder: [Int] = []
        // The deferred count change (see `adjustCounts`) belongs to exactly its leaf's ancestors.
        if deferredLeaf == Self.none {
            precondition(deferredVisible == 0 && deferredBreaks == 0 && deferredPath.isEmpty, "a deferred change without a leaf")
        } else {
            var ancestors: [Int32] = []
            var branch = leaves[Int(deferredLeaf)].parent
            while branch != Self.none {
                ancestors.append(branch)
                branch = branches[Int(branch)].parent
            }
            precondition(Array(deferredPath) == ancestors, "deferred path is not the leaf's ancestors")
        }
        func check(_ branch: Int, depth: Int, leafDepth: inout Int?) -> (Int, Int) {
            var visible = 0
            var breaks = 0
            let node = branches[branch]
            precondition(!node.children.isEmpty, "empty branch")
            if node.isBottom {
                precondition(leafDepth == nil || leafDepth == depth, "leaves at different depths")
                leafDepth = depth
                for child in node.children {
                    // A frozen leaf: no run array, and bytes that decode to runs that encode back to
                    // the same bytes; never the first leaf, the cursor's or the run hint's.
                    if isFrozen(Int(child)) {
                        precondition(leaves[Int(child)].runs.isEmpty, "a frozen leaf with a run array")
                        precondition(Int(child) != Self.firstLeaf, "the first leaf frozen")
                        precondition(cursorLeaf != child && hintLeaf != child, "a frozen leaf cached for editing")
                        let decoded = leaves[Int(child)].frozen.thawed()
                        precondition(!decoded.isEmpty, "a frozen leaf without runs")
                        precondition(FrozenRuns<Element>(decoded).bytes == leaves[Int(child)].frozen.bytes, "frozen runs do not encode back")
                    }
                    let leaf = readable(Int(child))
                    precondition(leaf.parent == Int32(branch), "leaf parent number")
                    let runVisible = leaf.runs.reduce(0) { $0 + $1.visibleLength }
                    precondition(runVisible == leaf.content.count, "leaf content \(leaf.content.count) != visible runs \(runVisible)")
                    // Asked of the predicate itself, not through the table that edits count with.
                    precondition(leaf.content.reduce(0) { $0 + (isBreak?($1) == true ? 1 : 0) } == leaf.breaks, "leaf break count")
                    precondition(leaf.runs.allSatisfy { $0.length > 0 }, "empty run")
                    precondition(leaf.runs.count <= Self.maxRunsPerLeaf && leaf.content.count <= Self.maxContentPerLeaf, "leaf over its capacity")
                    precondition(!leaf.runs.isEmpty || Int(child) == Self.firstLeaf, "a leaf without runs after the first")
                    visible += leaf.content.count
                    breaks += leaf.breaks
                    leavesInTreeOrder.append(Int(child))
                }
            } else {
                for child in node.children {
                    precondition(branches[Int(child)].parent == Int32(branch), "branch parent number")
                    let (v, b) = check(Int(child), depth: depth + 1, leafDepth: &leafDepth)
                    visible += v
                    breaks += b
                }
            }
            let deferred = deferredPath.contains(Int32(branch)) ? (deferredVisible, deferredBreaks) : (0, 0)
            precondition(visible == node.visible + deferred.0 && breaks == node.breaks + deferred.1, "branch counts")
            return (visible, breaks)
        }
        var leafDepth: Int?
        precondition(branches[Int(root)].parent == Self.none, "root has a parent")
        _ = check(Int(root), depth: 0, leafDepth: &leafDepth)
        var branchesInTree = 0
        func countBranches(_ branch: Int) {
            branchesInTree += 1
            if !branches[branch].isBottom { for child in branches[branch].children { countBranches(Int(child)) } }
        }
        countBranches(Int(root))
        precondition(branchesInTree + freeBranches.count == branches.count, "a branch neither in the tree nor free")
        precondition(leavesInTreeOrder.count + freeLeaves.count == leaves.count, "a leaf neither in the tree nor free")
        for free in freeLeaves {
            precondition(leaves[Int(free)].runs.isEmpty && !isFrozen(Int(free)) && leaves[Int(free)].parent == Self.none, "a free leaf in use")
        }
        var leaf: Int? = Self.firstLeaf
        var previous = Self.none
        for expected in leavesInTreeOrder {
            precondition(leaf == expected, "leaf list out of tree order")
            precondition(leaves[expected].previous == previous, "leaf back link")
            previous = Int32(expected)
            leaf = self.leaf(after: expected)
        }
        precondition(leaf == nil, "leaf list longer than tree")
        // The edit cursor, when set, names a leaf in the tree and where it starts.
        if cursorLeaf != Self.none {
            precondition(leaves[Int(cursorLeaf)].parent != Self.none && start(of: Int(cursorLeaf)).visible == cursorStart, "stale edit cursor")
        }
        // The run hint, when set, names a visible run of a leaf in the tree and where it starts.
        if hintLeaf != Self.none {
            let hinted = leaves[Int(hintLeaf)]
            precondition(hinted.parent != Self.none && hintRun < hinted.runs.count && !hinted.runs[hintRun].isDeleted
                         && hinted.contentStart(ofRun: hintRun) == hintStart, "stale run hint")
        }

        // 2. Every counter once (stored, or compacted away), indexed to its leaf. 3. Anchors
        // earlier (or compacted away), with smaller Lamport.
        for replica in idIndex.indices { idIndex[replica].checkInvariants() }
        // A counter in no run is compacted: its entry names no leaf, or (a gap absorbed by a
        // neighbouring entry, `LeafIndexColumn.absorb`) a leaf that does not hold it.
        var stored = idIndex.indices.map { replica in [Bool](repeating: false, count: idIndex[replica].count) }
        for number in leavesInTreeOrder {
            for run in runs(of: number) where run.end <= UInt64(stored[Int(run.replica)].count) {
                for c in Int(run.counter)..<Int(run.end) { stored[Int(run.replica)][c] = true }
            }
        }
        var seen = stored.map { $0.map { !$0 } }
        precondition(seen.reduce(0) { $0 + $1.filter { $0 }.count } == compactedCount, "compacted count")
        for replica in idIndex.indices {
            for c in 0..<idIndex[replica].count where seen[replica][c] {
                let entry = idIndex[replica][c]
                precondition(entry == Self.compactedLeaf || Int(entry) < leaves.count, "a compacted counter's entry names no leaf")
                precondition(locate(replica: UInt16(replica), counter: UInt64(c)) == nil, "a compacted counter found")
            }
        }
        var runCount = 0
        for number in leavesInTreeOrder {
            for run in runs(of: number) {
                runCount += 1
                let replica = Int(run.replica)
                precondition(run.end <= UInt64(seen[replica].count), "run beyond its replica's counters")
                if run.anchorReplica != Self.noReplica {
                    let a = Int(run.anchorReplica)
                    precondition(run.anchorCounter < UInt64(seen[a].count) && seen[a][Int(run.anchorCounter)], "anchor \(run.anchorReplica):\(run.anchorCounter) not earlier in order")
                    if let (al, ar, ao) = locate(replica: run.anchorReplica, counter: run.anchorCounter) {
                        precondition(storedRun(leaf: al, run: ar).lamport + UInt64(ao) < run.lamport, "anchor Lamport not smaller")
                    }
                }
                for c in Int(run.counter)..<Int(run.end) {
                    precondition(!seen[replica][c], "counter \(c) of replica \(replica) twice")
                    seen[replica][c] = true
                    precondition(idIndex[replica][c] == UInt32(number), "ID index points to wrong leaf")
                }
            }
        }
        precondition(seen.allSatisfy { $0.allSatisfy { $0 } }, "a counter missing from the runs")
        return runCount
    }
}

/// Where a `ReplicatingArray`'s memory goes, in elements and bytes of reserved capacity; for
/// benchmarks and tuning.
public struct ReplicatingArrayStorageStatistics: Sendable, CustomStringConvertible {
    public var leaves = 0
    public var runs = 0
    public var runBytes = 0
    public var contentBytes = 0
    public var idIndexBytes = 0
    public var leafObjectBytes = 0
    /// Leaves whose runs are frozen (`FrozenRuns`), their runs, and the bytes those take.
    public var frozenLeaves = 0
    public var frozenRuns = 0
    public var frozenRunBytes = 0
    /// Entries of the ID index (one per stretch of counters in one leaf).
    public var idIndexEntries = 0

    public var totalBytes: Int { runBytes + frozenRunBytes + contentBytes + idIndexBytes + leafObjectBytes }

    public var description: String {
        let frozen = frozenLeaves == 0 ? "" : "; frozen: \(frozenLeaves) leaves, \(frozenRuns) runs, \(frozenRunBytes) bytes"
        return "\(leaves) leaves, \(runs) runs; bytes: runs \(runBytes), content \(contentBytes), ID index \(idIndexBytes) (\(idIndexEntries) entries), leaf objects \(leafObjectBytes)\(frozen)"
    }
}

extension ReplicatingArray {
    public var _storageStatistics: ReplicatingArrayStorageStatistics {
        var stats = ReplicatingArrayStorageStatistics()
        let runStride = MemoryLayout<ReplicatingArrayStorage<Element>.Run>.stride
        for number in storage.leaves.indices {
            let leaf = storage.leaves[number]
            // A free leaf's record, waiting for reuse, holds no arrays.
            guard leaf.parent != ReplicatingArrayStorage<Element>.none else {
                stats.leafObjectBytes += MemoryLayout<ReplicatingArrayStorage<Element>.Leaf>.stride
                continue
            }
            stats.leaves += 1
            stats.runs += leaf.runs.count
            stats.runBytes += leaf.runs.capacity * runStride
            if storage.isFrozen(number) {
                stats.frozenLeaves += 1
                stats.frozenRuns += leaf.frozen.thawed().count
                stats.frozenRunBytes += leaf.frozen.reservedBytes
                stats.runs += leaf.frozen.thawed().count
            }
            stats.contentBytes += leaf.content.reservedBytes
            // The leaf record and the two array headers.
            stats.leafObjectBytes += MemoryLayout<ReplicatingArrayStorage<Element>.Leaf>.stride + 2 * 32
        }
        for replica in storage.idIndex.indices {
            stats.idIndexBytes += storage.idIndex[replica].reservedBytes
            stats.idIndexEntries += storage.idIndex[replica].entryCount
        }
        return stats
    }
}
