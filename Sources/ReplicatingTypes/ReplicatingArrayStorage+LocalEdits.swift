/// The local edits behind `ReplicatingArray.insert(contentsOf:at:)` and `removeSubrange(_:)`:
/// the hot path of typing, kept free of reference counting.
extension ReplicatingArrayStorage {
    /// Inserts `newElements` (not empty) at visible `index` as replica `replica`'s next run;
    /// returns the new run's anchor, first counter and first Lamport counter.
    /// - Complexity: O(log n + k + size of one leaf)
    @inline(__always)
    func insertLocally<C: Collection>(_ newElements: C, at index: Int, replica: ReplicaID)
        -> (anchor: ElementID?, counter: UInt64, lamport: UInt64) where C.Element == Element {
        // Text into an empty array (a document made from text): built leaf by leaf in one pass.
        if index == 0, isFreshlyEmpty,
           let filled = newElements.withContiguousStorageIfAvailable({ fillFresh($0, replica: replica) }) {
            return (nil, filled.counter, filled.lamport)
        }
        let n = newElements.count
        let me = intern(replica)
        let counter = UInt64(idIndex[Int(me)].count)
        let lamport = maxLamport + 1
        let anchor: ElementID?
        let leaf: Int
        var newRun = Run(counter: counter, lamport: lamport, anchorCounter: 0, replica: me,
                         anchorReplica: Self.noReplica, length: UInt32(n), isDeleted: false)
        var contentIndex = 0
        // The run that holds the new elements, and its first visible element in the leaf.
        let newRunIndex: Int
        let newRunStart: Int
        if index == 0 {
            anchor = nil
            leaf = Self.firstLeaf
            insertRun(newRun, at: 0, in: leaf)
            newRunIndex = 0
            newRunStart = 0
        } else {
            let (l, i) = leafForEdit(holding: index - 1)
            leaf = l
            let (run, offset, contentStart) = runHolding(visible: i, inLeaf: leaf)
            let r = leaves[leaf].runs[run]
            anchor = ElementID(replica: replicas[Int(r.replica)], counter: r.counter + UInt64(offset))
            contentIndex = contentStart + offset + 1
            let atRunEnd = offset + 1 == Int(r.length)
            if atRunEnd, r.replica == me, r.end == counter, r.lamport + UInt64(r.length) == lamport {
                leaves[leaf].runs[run].length += UInt32(n)
                newRunIndex = run
                newRunStart = contentStart
            } else {
                if !atRunEnd { splitRun(leaf, run, at: offset + 1) }
                newRun.anchorReplica = r.replica
                newRun.anchorCounter = r.counter + UInt64(offset)
                insertRun(newRun, at: run + 1, in: leaf)
                newRunIndex = run + 1
                newRunStart = contentIndex
            }
        }
        // Through a buffer when there is one: no iterator, no reference to count.
        let breaks = newElements.withContiguousStorageIfAvailable { buffer in
            leaves[leaf].content.insert(contentsOf: buffer, at: contentIndex)
            return countBreaks(in: buffer)
        } ?? {
            leaves[leaf].content.insert(contentsOf: newElements, at: contentIndex)
            return countBreaks(in: newElements)
        }()
        leaves[leaf].breaks += breaks
        adjustCounts(from: leaf, visible: n, breaks: breaks)
        idIndex[Int(me)].append(UInt32(leaf), count: n)
        maxLamport = lamport + UInt64(n) - 1
        // Set after every change above forgot the previous hint; a split below forgets this one.
        hintLeaf = Int32(leaf)
        hintRun = newRunIndex
        hintStart = newRunStart
        normalize(leaf)
        return (anchor, counter, lamport)
    }

    /// Turns the visible elements in `range` (not empty, within bounds) into tombstones; returns
    /// their IDs as ranges, in document order. A removal within one run goes through
    /// `removeVisible`; a cut over several runs is removed a leaf at a time (`removeChunks`),
    /// which leaves what removing it run by run leaves.
    /// - Complexity: O(log n + k + size of the leaves touched)
    func removeLocally(_ range: Range<Int>) -> ElementIDRanges {
        removeLocally(range, aLeafAtATime: true)
    }

    /// `removeLocally` as it was before cuts were removed a leaf at a time: one `removeVisible`
    /// per run. Kept as the reference the one-pass removal is tested against.
    func removeLocallyRunByRun(_ range: Range<Int>) -> ElementIDRanges {
        removeLocally(range, aLeafAtATime: false)
    }

    private func removeLocally(_ range: Range<Int>, aLeafAtATime: Bool) -> ElementIDRanges {
        var ranges = ElementIDRanges()
        var remaining = range.count
        // Removed elements vanish from the visible order, so each chunk starts at the same index.
        while remaining > 0 {
            let (leaf, i) = leafForEdit(holding: range.lowerBound)
            let (run, offset, contentStart) = runHolding(visible: i, inLeaf: leaf)
            let take = Swift.min(Int(leaves[leaf].runs[run].length) - offset, remaining)
            if aLeafAtATime, take < remaining {
                remaining -= removeChunks(leaf, run: run, offset: offset, contentStart: contentStart, limit: remaining, ranges: &ranges)
                continue
            }
            appendRemoved(leaf: leaf, run: run, offset: offset, count: take, to: &ranges)
            removeVisible(leaf, run: run, offset: offset, count: take, contentStart: contentStart, report: nil)
            remaining -= take
        }
        return ranges
    }
}
