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
        var leavesInTreeOrder: [Leaf] = []
        func check(_ branch: Branch, depth: Int, leafDepth: inout Int?) -> (Int, Int) {
            var visible = 0
            var breaks = 0
            if branch.isBottom {
                precondition(leafDepth == nil || leafDepth == depth, "leaves at different depths")
                leafDepth = depth
                for leaf in branch.leaves {
                    precondition(leaf.parent === branch, "leaf parent pointer")
                    let runVisible = leaf.runs.reduce(0) { $0 + $1.visibleLength }
                    precondition(runVisible == leaf.content.count, "leaf content \(leaf.content.count) != visible runs \(runVisible)")
                    precondition(countBreaks(in: leaf.content) == leaf.breaks, "leaf break count")
                    precondition(leaf.runs.allSatisfy { $0.length > 0 }, "empty run")
                    visible += leaf.content.count
                    breaks += leaf.breaks
                    leavesInTreeOrder.append(leaf)
                }
            } else {
                precondition(!branch.branches.isEmpty, "empty branch")
                for child in branch.branches {
                    precondition(child.parent === branch, "branch parent pointer")
                    let (v, b) = check(child, depth: depth + 1, leafDepth: &leafDepth)
                    visible += v
                    breaks += b
                }
            }
            precondition(visible == branch.visible && breaks == branch.breaks, "branch counts")
            return (visible, breaks)
        }
        var leafDepth: Int?
        _ = check(root, depth: 0, leafDepth: &leafDepth)
        var leaf: Leaf? = firstLeaf
        for expected in leavesInTreeOrder {
            precondition(leaf === expected, "leaf list out of tree order")
            precondition(expected.next == nil || expected.next?.previous === expected, "leaf back pointer")
            leaf = expected.next
        }
        precondition(leaf == nil, "leaf list longer than tree")

        // 2. Every counter once, indexed to its leaf. 3. Anchors earlier, with smaller Lamport.
        var seen = idIndex.map { [Bool](repeating: false, count: $0.count) }
        var runs = 0
        for leaf in leavesInTreeOrder {
            for run in leaf.runs {
                runs += 1
                let replica = Int(run.replica)
                precondition(run.end <= UInt64(seen[replica].count), "run beyond its replica's counters")
                if run.anchorReplica != Self.noReplica {
                    let a = Int(run.anchorReplica)
                    precondition(run.anchorCounter < UInt64(seen[a].count) && seen[a][Int(run.anchorCounter)], "anchor \(run.anchorReplica):\(run.anchorCounter) not earlier in order")
                    if let (al, ar, ao) = locate(replica: run.anchorReplica, counter: run.anchorCounter) {
                        precondition(al.runs[ar].lamport + UInt64(ao) < run.lamport, "anchor Lamport not smaller")
                    }
                }
                for c in Int(run.counter)..<Int(run.end) {
                    precondition(!seen[replica][c], "counter \(c) of replica \(replica) twice")
                    seen[replica][c] = true
                    precondition(idIndex[replica][c] == leaf.number, "ID index points to wrong leaf")
                }
            }
            // 4. Paragraph rule.
            if let isBreak, let lastBreak = leaf.content.lastIndex(where: isBreak) {
                precondition(leaf.breaks == 1 && lastBreak == leaf.content.count - 1, "a visible break does not end its leaf")
            }
        }
        precondition(seen.allSatisfy { $0.allSatisfy { $0 } }, "a counter missing from the runs")
        return runs
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

    public var totalBytes: Int { runBytes + contentBytes + idIndexBytes + leafObjectBytes }

    public var description: String {
        "\(leaves) leaves, \(runs) runs; bytes: runs \(runBytes), content \(contentBytes), ID index \(idIndexBytes), leaf objects \(leafObjectBytes)"
    }
}

extension ReplicatingArray {
    public var _storageStatistics: ReplicatingArrayStorageStatistics {
        var stats = ReplicatingArrayStorageStatistics()
        let runStride = MemoryLayout<ReplicatingArrayStorage<Element>.Run>.stride
        for leaf in storage.leafTable {
            stats.leaves += 1
            stats.runs += leaf.runs.count
            stats.runBytes += leaf.runs.capacity * runStride
            stats.contentBytes += leaf.content.capacity * MemoryLayout<Element>.stride
            // Object header and fields, plus the two array headers.
            stats.leafObjectBytes += 96 + 2 * 32
        }
        for column in storage.idIndex { stats.idIndexBytes += column.reservedBytes }
        return stats
    }
}
