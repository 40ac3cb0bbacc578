/// Filling an empty array in one pass: a document made from text (a file opened, a project
/// shared) is one insertion into nothing, which `insertLocally` would place in one leaf and then
/// split piece by piece from the end.
extension ReplicatingArrayStorage {
    /// Whether this storage holds nothing at all yet (one empty leaf under the root, no deferred
    /// count), so that `fillFresh` may build it.
    /// The most elements `fillFresh` puts in one leaf: seven eighths of its capacity.
    static var freshContentPerLeaf: Int { maxContentPerLeaf * 7 / 8 }

    var isFreshlyEmpty: Bool {
        leaves.count == 1 && branches.count == 1 && leaves[Self.firstLeaf].runs.isEmpty && deferredLeaf == Self.none
    }

    /// Inserts `elements` (not empty) into a storage that `isFreshlyEmpty`, as replica
    /// `replica`'s next run, at the start (no anchor); returns its first counter and Lamport
    /// counter, as `insertLocally(_:at: 0, replica:)` does.
    ///
    /// The records are those `insertLocally` and `normalize` make: one run per leaf, each after
    /// the first anchored to the element before it, with consecutive counters and Lamport
    /// counters. The text is cut into equal pieces of at most `freshContentPerLeaf` elements
    /// (line breaks anywhere in them), one leaf each, numbered in document order; the tree is
    /// built bottom-up over them, full branches.
    /// - Complexity: O(n), one pass to count the breaks and one to copy.
    func fillFresh(_ elements: UnsafeBufferPointer<Element>, replica: ReplicaID) -> (counter: UInt64, lamport: UInt64) {
        precondition(isFreshlyEmpty && !elements.isEmpty, "fillFresh needs an empty storage and elements")
        forgetRunHint()
        let me = intern(replica)
        let counter = UInt64(idIndex[Int(me)].count)
        let lamport = maxLamport + 1
        let n = elements.count
        var visibleTotal = 0
        var breaksTotal = 0
        var previousLeaf = Self.none
        // Appends one piece `start..<end` as the next leaf in document order.
        func addLeaf(_ start: Int, _ end: Int, breaks: Int) {
            let number = previousLeaf == Self.none ? Self.firstLeaf : leaves.count
            let run = Run(counter: counter + UInt64(start), lamport: lamport + UInt64(start),
                          anchorCounter: start == 0 ? 0 : counter + UInt64(start) - 1, replica: me,
                          anchorReplica: start == 0 ? Self.noReplica : me, length: UInt32(end - start), isDeleted: false)
            var leaf = number == Self.firstLeaf ? leaves[Self.firstLeaf] : Leaf(parent: 0)
            leaf.runs.reserveCapacity(1)
            leaf.runs.append(run)
            leaf.content.append(contentsOf: UnsafeBufferPointer(rebasing: elements[start..<end]))
            leaf.breaks = breaks
            leaf.previous = previousLeaf
            leaf.next = Self.none
            if number == Self.firstLeaf {
                leaves[Self.firstLeaf] = leaf
            } else {
                leaves[Int(previousLeaf)].next = Int32(number)
                leaves.append(leaf)
            }
            idIndex[Int(me)].append(UInt32(number), count: end - start)
            previousLeaf = Int32(number)
            visibleTotal += end - start
            breaksTotal += breaks
        }
        // Equal pieces, a little below a leaf's capacity so that typing into one does not split it at once.
        let pieces = (n + Self.freshContentPerLeaf - 1) / Self.freshContentPerLeaf
        let size = (n + pieces - 1) / pieces
        var pieceStart = 0
        while pieceStart < n {
            let pieceEnd = Swift.min(pieceStart + size, n)
            addLeaf(pieceStart, pieceEnd, breaks: isBreak == nil ? 0 : countBreaks(in: UnsafeBufferPointer(rebasing: elements[pieceStart..<pieceEnd])))
            pieceStart = pieceEnd
        }
        buildTree(visible: visibleTotal, breaks: breaksTotal)
        leaves.shrinkToFit()
        branches.shrinkToFit()
        maxLamport = lamport + UInt64(n) - 1
        return (counter, lamport)
    }

    /// Puts every leaf, in number order (which `fillFresh` made document order), under a tree of
    /// full branches; branch 0, the empty storage's root, becomes the first bottom branch.
    private func buildTree(visible: Int, breaks: Int) {
        var level: [Int32] = []
        var start = 0
        while start < leaves.count {
            let end = Swift.min(start + Self.maxChildrenPerBranch, leaves.count)
            var branch = Branch(isBottom: true)
            branch.children.reserveCapacity(end - start)
            let number = level.isEmpty ? 0 : Int32(branches.count)
            for leaf in start..<end {
                branch.children.append(Int32(leaf))
                branch.visible += leaves[leaf].content.count
                branch.breaks += leaves[leaf].breaks
                leaves[leaf].parent = number
            }
            if number == 0 { branches[0] = branch } else { branches.append(branch) }
            level.append(number)
            start = end
        }
        while level.count > 1 {
            var upper: [Int32] = []
            var index = 0
            while index < level.count {
                let end = Swift.min(index + Self.maxChildrenPerBranch, level.count)
                var branch = Branch(isBottom: false)
                let number = Int32(branches.count)
                for child in level[index..<end] {
                    branch.children.append(child)
                    branch.visible += branches[Int(child)].visible
                    branch.breaks += branches[Int(child)].breaks
                    branches[Int(child)].parent = number
                }
                branches.append(branch)
                upper.append(number)
                index = end
            }
            level = upper
        }
        root = level[0]
        branches[Int(root)].parent = Self.none
        precondition(branches[Int(root)].visible == visible && branches[Int(root)].breaks == breaks, "fillFresh counts")
        cursorLeaf = Self.none
    }
}
