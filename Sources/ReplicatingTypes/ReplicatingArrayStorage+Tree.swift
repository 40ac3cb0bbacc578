/// Keeping the storage's shape: splitting and joining runs, splitting leaves at their capacity and
/// merging small ones, splitting and freeing branches, and building a storage in document order.
extension ReplicatingArrayStorage {
    // MARK: Runs

    /// Makes room for `extra` more runs in `leaf`, growing its array by a quarter rather than
    /// doubling it: runs are most of an edited document's memory, and doubling left a third of
    /// their room unused on average.
    @inline(__always)
    func reserveRuns(_ extra: Int, in leaf: Int) {
        let count = leaves[leaf].runs.count
        guard count + extra > leaves[leaf].runs.capacity else { return }
        leaves[leaf].runs.reserveCapacity(Swift.max(count + extra, count + count / 4 + 2))
    }

    /// Inserts `run` at `index` of `leaf`'s runs (see `reserveRuns`).
    @inline(__always)
    func insertRun(_ run: Run, at index: Int, in leaf: Int) {
        forgetRunHint()
        reserveRuns(1, in: leaf)
        leaves[leaf].runs.insert(run, at: index)
    }

    /// Splits run `run` of `leaf` so that a new run starts at `offset` (0 < offset < length).
    @inline(__always)
    func splitRun(_ leaf: Int, _ run: Int, at offset: Int) {
        forgetRunHint()
        let old = leaves[leaf].runs[run]
        var right = old
        right.counter = old.counter + UInt64(offset)
        right.lamport = old.lamport + UInt64(offset)
        right.anchorReplica = old.replica
        right.anchorCounter = right.counter - 1
        right.length = old.length - UInt32(offset)
        leaves[leaf].runs[run].length = UInt32(offset)
        insertRun(right, at: run + 1, in: leaf)
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
        forgetRunHint()
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

    /// Points the ID index at `leaf` for every element of `runs`. Neighbouring runs of one
    /// replica with adjacent counters (typed text and the tombstone of a typo fixed in it) are
    /// one assignment: the index holds the same either way.
    @inline(__always)
    func assignIndex<R: Collection<Run>>(of runs: R, to leaf: Int) {
        var i = runs.startIndex
        while i != runs.endIndex {
            let first = runs[i]
            var end = first.end
            runs.formIndex(after: &i)
            while i != runs.endIndex, runs[i].replica == first.replica, runs[i].counter == end {
                end = runs[i].end
                runs.formIndex(after: &i)
            }
            idIndex[Int(first.replica)].assign(UInt32(leaf), to: Int(first.counter)..<Int(end))
        }
    }

    // MARK: Leaves

    @inline(__always)
    private func isOverfull(_ leaf: Int) -> Bool {
        leaves[leaf].runs.count > Self.maxRunsPerLeaf || leaves[leaf].content.count > Self.maxContentPerLeaf
    }

    /// Restores the leaf rule after an insertion into `leaf`: no leaf grows past its capacity.
    @inline(__always)
    func normalize(_ leaf: Int) {
        if isOverfull(leaf) { splitToFit(leaf) }
    }

    /// Splits an overfull leaf by moving pieces off its end into new leaves after it, the last
    /// piece first: each element moves once, so a long insertion costs O(n). A leaf at most twice
    /// its capacity is cut in two halves; a longer one gives pieces of three quarters of it.
    private func splitToFit(_ leaf: Int) {
        while isOverfull(leaf) {
            let runCount = leaves[leaf].runs.count
            let contentCount = leaves[leaf].content.count
            if runCount > Self.maxRunsPerLeaf {
                let piece = runCount <= 2 * Self.maxRunsPerLeaf ? runCount / 2 : Self.maxRunsPerLeaf * 3 / 4
                let right = split(leaf, at: runCount - piece)
                if isOverfull(right) { splitToFit(right) }
            } else {
                let piece = contentCount <= 2 * Self.maxContentPerLeaf ? contentCount / 2 : Self.maxContentPerLeaf * 3 / 4
                // At least one visible element stays before the cut, so the cut is past run 0.
                let (r, offset, _) = leaves[leaf].runHolding(visible: contentCount - piece)
                var run = r
                if offset > 0 {
                    splitRun(leaf, r, at: offset)
                    run += 1
                }
                split(leaf, at: run)
            }
        }
    }

    /// Moves runs `run...` of `leaf` into a new leaf placed right after it; returns the new leaf.
    @discardableResult
    func split(_ leaf: Int, at run: Int) -> Int {
        forgetRunHint()
        let right = leaves.place(Leaf(parent: leaves[leaf].parent), reusing: &freeLeaves)
        var moved = Leaf(parent: leaves[leaf].parent)
        let contentStart = leaves[leaf].contentStart(ofRun: run)
        moved.runs.append(contentsOf: leaves[leaf].runs[run...])
        leaves[leaf].runs.removeSubrange(run...)
        moved.content = leaves[leaf].content.removeSuffix(from: contentStart)
        // The runs kept are at most half of what the array had room for: give the rest back.
        if leaves[leaf].runs.capacity > leaves[leaf].runs.count + leaves[leaf].runs.count / 4 + 2 {
            var trimmed = ContiguousArray<Run>()
            trimmed.reserveCapacity(leaves[leaf].runs.count + leaves[leaf].runs.count / 4 + 2)
            trimmed.append(contentsOf: leaves[leaf].runs)
            leaves[leaf].runs = trimmed
        }
        leaves[leaf].content.trimCapacity()
        moved.breaks = leaves[leaf].breaks > 0 ? countBreaks(in: moved.content) : 0
        leaves[leaf].breaks -= moved.breaks
        assignIndex(of: moved.runs, to: right)
        moved.next = leaves[leaf].next
        moved.previous = Int32(leaf)
        if moved.next != Self.none { leaves[Int(moved.next)].previous = Int32(right) }
        leaves[leaf].next = Int32(right)
        leaves[right] = moved
        place(right, after: leaf)
        return right
    }

    /// After a removal from `leaf`: when it has become small, merges it with a neighbour that
    /// leaves room for both (the right one into the left one, which keeps leaf 0 first). Moves
    /// at most a quarter of a leaf's capacity of elements and half its runs.
    /// - Complexity: O(1) when nothing is merged, else O(size of one leaf + log n)
    @inline(__always)
    func mergeIfSmall(_ leaf: Int) {
        guard leaves[leaf].content.count <= Self.maxContentPerLeaf / 4, leaves[leaf].runs.count <= Self.maxRunsPerLeaf / 2 else { return }
        let next = leaves[leaf].next
        if next != Self.none, fitTogetherThawing(leaf, Int(next)) {
            merge(Int(next), into: leaf)
            return
        }
        let previous = leaves[leaf].previous
        if previous != Self.none, fitTogetherThawing(Int(previous), leaf) { merge(leaf, into: Int(previous)) }
    }

    /// Moves every run of `right` to the end of `left`, the leaf before it, and frees `right`.
    private func merge(_ right: Int, into left: Int) {
        settleCounts()
        cursorLeaf = Self.none
        forgetRunHint()
        let moved = leaves[right]
        if moved.parent != leaves[left].parent {
            addToAncestors(of: right, visible: -moved.content.count, breaks: -moved.breaks)
            addToAncestors(of: left, visible: moved.content.count, breaks: moved.breaks)
        }
        let junction = leaves[left].runs.count
        reserveRuns(moved.runs.count, in: left)
        leaves[left].runs.append(contentsOf: moved.runs)
        leaves[left].content.append(contentsOf: moved.content)
        leaves[left].breaks += moved.breaks
        assignIndex(of: moved.runs, to: left)
        if junction > 0 { coalesce(left, around: junction) }
        leaves[left].next = moved.next
        if moved.next != Self.none { leaves[Int(moved.next)].previous = Int32(left) }
        detach(right)
    }

    private func addToAncestors(of leaf: Int, visible: Int, breaks: Int) {
        var branch = leaves[leaf].parent
        while branch != Self.none {
            branches[Int(branch)].visible += visible
            branches[Int(branch)].breaks += breaks
            branch = branches[Int(branch)].parent
        }
    }

    /// Takes the emptied leaf `leaf` out of the tree and frees it, with every branch left without
    /// children; a root left with one branch below it gives way to that branch.
    private func detach(_ leaf: Int) {
        var branch = Int(leaves[leaf].parent)
        if let i = branches[branch].children.firstIndex(of: Int32(leaf)) { branches[branch].children.remove(at: i) }
        leaves[leaf] = Leaf(parent: Self.none)
        freeLeaves.append(Int32(leaf))
        // Leaf 0 is never freed, so the root keeps a child.
        while branches[branch].children.isEmpty {
            let parent = Int(branches[branch].parent)
            if let i = branches[parent].children.firstIndex(of: Int32(branch)) { branches[parent].children.remove(at: i) }
            branches[branch] = Branch(isBottom: true)
            freeBranches.append(Int32(branch))
            branch = parent
        }
        while !branches[Int(root)].isBottom && branches[Int(root)].children.count == 1 {
            let child = branches[Int(root)].children[0]
            branches[Int(root)] = Branch(isBottom: true)
            freeBranches.append(root)
            root = child
            branches[Int(child)].parent = Self.none
        }
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
        let right = branches.place(Branch(isBottom: branches[branch].isBottom), reusing: &freeBranches)
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
        branches[right] = moved
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
            root = Int32(branches.place(newRoot, reusing: &freeBranches))
            branches[branch].parent = root
            branches[right].parent = root
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
            result.appendBuilt(runs: runs(of: source), content: leaves[source].content)
            leaf = self.leaf(after: source)
        }
        if compactedCount > 0 { result.fitAfterCompaction() }
        return result
    }

    /// Appends runs (with the content of their visible elements) at the end of the array, into
    /// the last leaf while they fit in it, else into a new leaf; used to build a storage in
    /// document order (leaves come out nearly full).
    func appendBuilt<R: Collection<Run>, C: Collection<Element>>(runs: R, content: C) {
        var last = Int(root)
        while !branches[last].isBottom { last = Int(branches[last].children[branches[last].children.count - 1]) }
        last = Int(branches[last].children[branches[last].children.count - 1])
        let fits = leaves[last].runs.count + runs.count <= Self.maxRunsPerLeaf
            && leaves[last].content.count + content.count <= Self.maxContentPerLeaf
        if !leaves[last].runs.isEmpty && !fits {
            last = split(last, at: leaves[last].runs.count)
        }
        let junction = leaves[last].runs.count
        reserveRuns(runs.count, in: last)
        leaves[last].runs.append(contentsOf: runs)
        leaves[last].content.append(contentsOf: content)
        let breaks = countBreaks(in: content)
        leaves[last].breaks += breaks
        adjustCounts(from: last, visible: content.count, breaks: breaks)
        assignIndex(of: runs, to: last)
        if junction > 0 { coalesce(last, around: junction) }
        normalize(last)
    }
}
