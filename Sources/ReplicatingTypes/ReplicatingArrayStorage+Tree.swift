/// Keeping the storage's shape: splitting and joining runs, splitting leaves at paragraph breaks
/// and at their capacity, splitting branches, and building a storage in document order.
extension ReplicatingArrayStorage {
    // MARK: Runs

    /// Splits run `run` of `leaf` so that a new run starts at `offset` (0 < offset < length).
    @inline(__always)
    func splitRun(_ leaf: Int, _ run: Int, at offset: Int) {
        let old = leaves[leaf].runs[run]
        var right = old
        right.counter = old.counter + UInt64(offset)
        right.lamport = old.lamport + UInt64(offset)
        right.anchorReplica = old.replica
        right.anchorCounter = right.counter - 1
        right.length = old.length - UInt32(offset)
        leaves[leaf].runs[run].length = UInt32(offset)
        leaves[leaf].runs.insert(right, at: run + 1)
    }

    /// True when `b` directly continues `a` (same replica, consecutive counters and Lamport
    /// counters, same visibility), so the two records can be one.
    @inline(__always)
    static func continues(_ a: Run, _ b: Run) -> Bool {
        a.replica == b.replica && a.end == b.counter && a.lamport + UInt64(a.length) == b.lamport
            && a.isDeleted == b.isDeleted
    }

    /// Joins run `run` with its neighbours in the same leaf where they continue each other.
    func coalesce(_ leaf: Int, around run: Int) {
        var r = run
        if r + 1 < leaves[leaf].runs.count, Self.continues(leaves[leaf].runs[r], leaves[leaf].runs[r + 1]) {
            leaves[leaf].runs[r].length += leaves[leaf].runs[r + 1].length
            leaves[leaf].runs.remove(at: r + 1)
        }
        if r > 0, Self.continues(leaves[leaf].runs[r - 1], leaves[leaf].runs[r]) {
            leaves[leaf].runs[r - 1].length += leaves[leaf].runs[r].length
            leaves[leaf].runs.remove(at: r)
            r -= 1
        }
    }

    // MARK: Leaves

    /// True when `leaf` breaks the leaf rules: a visible break that does not end it, or more than
    /// one break.
    @inline(__always)
    private func hasInnerBreak(_ leaf: Int) -> Bool {
        guard let isBreak, leaves[leaf].breaks > 0 else { return false }
        return leaves[leaf].breaks > 1 || !isBreak(leaves[leaf].content[leaves[leaf].content.count - 1])
    }

    @inline(__always)
    private func isOverfull(_ leaf: Int) -> Bool {
        leaves[leaf].runs.count > Self.maxRunsPerLeaf || leaves[leaf].content.count > Self.maxContentPerLeaf
    }

    /// Restores the leaf rules after an insertion into `leaf`: a visible break ends its leaf, and
    /// no leaf grows past its capacity. `checkBreaks: false` says the insertion brought no break
    /// and went before the leaf's last visible element, so the break rule still holds.
    @inline(__always)
    func normalize(_ leaf: Int, checkBreaks: Bool = true) {
        if (checkBreaks && hasInnerBreak(leaf)) || isOverfull(leaf) { splitToRules(leaf) }
    }

    private func splitToRules(_ leaf: Int) {
        var current = leaf
        while true {
            if hasInnerBreak(current), let isBreak {
                // Split right after the last visible break that does not end the leaf: the part
                // moved out is one paragraph, so splitting a long text costs O(n), not O(n^2).
                var index = leaves[current].content.count - 1
                if isBreak(leaves[current].content[index]) { index -= 1 }
                while !isBreak(leaves[current].content[index]) { index -= 1 }
                let (run, offset, _) = leaves[current].runHolding(visible: index)
                if offset + 1 < Int(leaves[current].runs[run].length) { splitRun(current, run, at: offset + 1) }
                splitToRules(split(current, at: run + 1))
                continue
            }
            if isOverfull(current) {
                let run: Int
                if leaves[current].runs.count > Self.maxRunsPerLeaf {
                    run = leaves[current].runs.count / 2
                } else {
                    let (r, offset, _) = leaves[current].runHolding(visible: leaves[current].content.count / 2)
                    if offset > 0 { splitRun(current, r, at: offset) }
                    run = offset > 0 ? r + 1 : r
                }
                let right = split(current, at: Swift.max(run, 1))
                if isOverfull(right) {
                    current = right
                    continue
                }
                if isOverfull(current) { continue }
            }
            return
        }
    }

    /// Moves runs `run...` of `leaf` into a new leaf placed right after it; returns the new leaf.
    @discardableResult
    func split(_ leaf: Int, at run: Int) -> Int {
        let right = leaves.count
        var moved = Leaf(parent: leaves[leaf].parent)
        let contentStart = leaves[leaf].contentStart(ofRun: run)
        moved.runs.append(contentsOf: leaves[leaf].runs[run...])
        leaves[leaf].runs.removeSubrange(run...)
        moved.content.append(contentsOf: leaves[leaf].content[contentStart...])
        leaves[leaf].content.removeSubrange(contentStart...)
        Self.trimCapacity(&leaves[leaf].runs)
        Self.trimCapacity(&leaves[leaf].content)
        moved.breaks = countBreaks(in: moved.content)
        leaves[leaf].breaks -= moved.breaks
        for r in moved.runs { idIndex[Int(r.replica)].assign(UInt32(right), to: Int(r.counter)..<Int(r.end)) }
        moved.next = leaves[leaf].next
        moved.previous = Int32(leaf)
        if moved.next != Self.none { leaves[Int(moved.next)].previous = Int32(right) }
        leaves[leaf].next = Int32(right)
        leaves.append(moved)
        place(right, after: leaf)
        return right
    }

    /// Places the new leaf `leaf` in the tree right after `existing`, splitting branches that
    /// overflow. The branch counts do not change: the new leaf holds what `existing` gave up.
    private func place(_ leaf: Int, after existing: Int) {
        settleCounts()
        let parent = Int(leaves[existing].parent)
        let index = (branches[parent].children.firstIndex(of: Int32(existing)) ?? branches[parent].children.count - 1) + 1
        branches[parent].children.insert(Int32(leaf), at: index)
        leaves[leaf].parent = Int32(parent)
        if branches[parent].children.count > Self.maxChildrenPerBranch { splitBranch(parent) }
    }

    private func splitBranch(_ branch: Int) {
        let right = branches.count
        let isBottom = branches[branch].isBottom
        var moved = Branch(isBottom: isBottom)
        let half = branches[branch].children.count / 2
        moved.children.append(contentsOf: branches[branch].children[half...])
        branches[branch].children.removeSubrange(half...)
        for child in moved.children {
            if isBottom {
                leaves[Int(child)].parent = Int32(right)
                moved.visible += leaves[Int(child)].content.count
                moved.breaks += leaves[Int(child)].breaks
            } else {
                branches[Int(child)].parent = Int32(right)
                moved.visible += branches[Int(child)].visible
                moved.breaks += branches[Int(child)].breaks
            }
        }
        branches[branch].visible -= moved.visible
        branches[branch].breaks -= moved.breaks
        moved.parent = branches[branch].parent
        branches.append(moved)
        let parent = Int(branches[branch].parent)
        if parent != Int(Self.none) {
            let index = (branches[parent].children.firstIndex(of: Int32(branch)) ?? branches[parent].children.count - 1) + 1
            branches[parent].children.insert(Int32(right), at: index)
            if branches[parent].children.count > Self.maxChildrenPerBranch { splitBranch(parent) }
        } else {
            var newRoot = Branch(isBottom: false)
            newRoot.children = [Int32(branch), Int32(right)]
            newRoot.visible = branches[branch].visible + branches[right].visible
            newRoot.breaks = branches[branch].breaks + branches[right].breaks
            root = Int32(branches.count)
            branches[branch].parent = root
            branches[right].parent = root
            branches.append(newRoot)
        }
    }

    /// Gives back memory an array no longer needs (after a split or a large removal).
    @inline(__always)
    static func trimCapacity<T>(_ array: inout ContiguousArray<T>) {
        guard array.capacity > 2 * array.count + 16 else { return }
        var trimmed = ContiguousArray<T>()
        trimmed.reserveCapacity(array.count)
        trimmed.append(contentsOf: array)
        array = trimmed
    }

    // MARK: Copying

    /// A storage with this one's replicas, counters and waiting operations but no runs yet: every
    /// counter reads as compacted until the runs appended to it claim theirs.
    func emptyCopy() -> ReplicatingArrayStorage {
        let result = ReplicatingArrayStorage(isBreak: isBreak)
        result.replicas = replicas
        result.replicaIndex = replicaIndex
        for i in idIndex.indices {
            var column = LeafIndexColumn()
            column.append(Self.compactedLeaf, count: idIndex[i].count)
            result.idIndex.append(column)
        }
        result.maxLamport = maxLamport
        result.compactedCount = compactedCount
        result.pendingInsertions = pendingInsertions
        result.pendingRemovals = pendingRemovals
        result.rejectedOperationCount = rejectedOperationCount
        return result
    }

    /// A deep copy with the same document order and indexes (leaves are repacked).
    func copy() -> ReplicatingArrayStorage {
        let result = emptyCopy()
        var leaf: Int? = Self.firstLeaf
        while let source = leaf {
            result.appendBuilt(runs: leaves[source].runs, content: leaves[source].content)
            leaf = self.leaf(after: source)
        }
        return result
    }

    /// Appends runs (with the content of their visible elements) at the end of the array, as a new
    /// leaf unless the last leaf is empty; used to build a storage in document order.
    func appendBuilt<R: Collection<Run>, C: Collection<Element>>(runs: R, content: C) {
        var last = leaves.count - 1
        while let next = leaf(after: last) { last = next }
        if !leaves[last].runs.isEmpty {
            last = split(last, at: leaves[last].runs.count)
        }
        leaves[last].runs.append(contentsOf: runs)
        leaves[last].content.append(contentsOf: content)
        let breaks = countBreaks(in: content)
        leaves[last].breaks = breaks
        adjustCounts(from: last, visible: content.count, breaks: breaks)
        for r in runs { idIndex[Int(r.replica)].assign(UInt32(last), to: Int(r.counter)..<Int(r.end)) }
        normalize(last)
    }
}
