extension ReplicatingArray {
    /// Applies an operation from another replica (or this one: a duplicate is a no-op) and returns
    /// the visible changes it caused, in order.
    ///
    /// An insertion whose anchor, or whose replica's earlier insertions, have not arrived yet is
    /// buffered and applied as soon as they do; so is a removal of elements not yet inserted.
    /// - Complexity: O(log n + k + size of the leaves touched), plus the buffered operations it
    ///   releases.
    @discardableResult
    public mutating func apply(_ operation: ReplicatingArrayOperation<Element>) -> [ReplicatingArrayChange<Element>] {
        var changes: [ReplicatingArrayChange<Element>] = []
        apply(operation) { changes.append($0) }
        return changes
    }

    /// Applies an operation, calling `report` with each visible change right after it happens,
    /// while the array is in exactly the state that change produced.
    mutating func apply(_ operation: ReplicatingArrayOperation<Element>, report: (ReplicatingArrayChange<Element>) -> Void) {
        withoutActuallyEscaping(report) { integrate(operation, report: $0) }
    }

    /// Applies an operation like `apply(_:)` without working out its visible changes: no
    /// positions are found and nothing is allocated for them. For replaying a log, loading, or a
    /// catch-up that no editor watches. Same state as `apply(_:)`.
    /// - Complexity: O(log n + k + size of the leaves touched)
    public mutating func integrate(_ operation: consuming ReplicatingArrayOperation<Element>) {
        integrate(operation, report: nil)
    }

    // Operations are taken, not borrowed, down to where they are placed: the compiler copied a
    // borrowed one at each step, through its value witness (a fifth of a remote replay).
    private mutating func integrate(_ operation: consuming ReplicatingArrayOperation<Element>, report: ((ReplicatingArrayChange<Element>) -> Void)?) {
        makeUnique()
        switch consume operation {
        case .insert(let insertion):
            switch storage.integrate(insertion, report: report, holdIfWaiting: true) {
            case .applied: storage.releasePending(report: report)
            case .waiting: break
            case .invalid: storage.rejectedOperationCount += 1
            }
        case .remove(let ranges):
            storage.remove(ranges, report: report)
        }
    }

    /// Why `operation` can never be applied (it contradicts what this copy holds, or itself), or
    /// nil if it can be applied now or once what it depends on arrives. `apply` drops such
    /// operations, changing nothing, and counts them in `rejectedOperationCount`.
    public func validationError(for operation: ReplicatingArrayOperation<Element>) -> String? {
        switch operation {
        case .insert(let insertion): return storage.validationError(for: insertion)
        case .remove(let ranges):
            for range in ranges where range.start.counter > UInt64.max - range.count {
                return "removal range \(range) overflows"
            }
            return nil
        }
    }

    /// Number of operations dropped because they could never be applied (see `validationError`).
    public var rejectedOperationCount: Int { storage.rejectedOperationCount }

    /// Applies operations in order; returns all visible changes.
    @discardableResult
    public mutating func apply<S: Sequence>(contentsOf operations: S) -> [ReplicatingArrayChange<Element>] where S.Element == ReplicatingArrayOperation<Element> {
        var changes: [ReplicatingArrayChange<Element>] = []
        // Straight into one array: no array of changes made and dropped per operation.
        for operation in operations { apply(operation) { changes.append($0) } }
        return changes
    }
}

extension ReplicatingArrayStorage {
    /// Marks the elements in `ranges` removed; elements not yet inserted are remembered and removed
    /// when they arrive. Reports visible changes when `report` is given.
    func remove(_ ranges: ElementIDRanges, report: ((ReplicatingArrayChange<Element>) -> Void)?) {
        for range in ranges where range.count > 0 {
            let have = known(range.start.replica)
            let end = range.counters.upperBound
            if end > have {
                let missing = Swift.max(range.start.counter, have)..<end
                pendingRemovals[range.start.replica, default: []].append(missing)
            }
            guard let replica = index(of: range.start.replica) else { continue }
            var counter = range.start.counter
            let presentEnd = Swift.min(end, have)
            while counter < presentEnd {
                guard let (leaf, run, offset, contentStart) = locateWithStart(replica: replica, counter: counter) else {
                    // Dropped by compaction: removed already.
                    counter = compactedEnd(replica: replica, from: counter, limit: presentEnd)
                    continue
                }
                let r = leaves[leaf].runs[run]
                let take = Swift.min(Int(r.length) - offset, Int(presentEnd - counter))
                if !r.isDeleted {
                    removeVisible(leaf, run: run, offset: offset, count: take, contentStart: contentStart, report: report)
                }
                counter += UInt64(take)
            }
        }
    }

    /// Turns `count` visible elements of run `run` starting at `offset` into tombstones;
    /// `contentStart` is the leaf's number of visible elements before the run.
    func removeVisible(_ leaf: Int, run: Int, offset: Int, count: Int, contentStart: Int,
                       report: ((ReplicatingArrayChange<Element>) -> Void)?) {
        let contentIndex = contentStart + offset
        let removedRange = contentIndex..<(contentIndex + count)
        let removed = report == nil ? [] : Array(leaves[leaf].content[removedRange])
        let breaks: Int
        if leaves[leaf].breaks == 0 {
            breaks = 0
        } else if count == 1, let isBreak {
            breaks = isBreak(leaves[leaf].content[contentIndex]) ? 1 : 0
        } else {
            breaks = countBreaks(in: leaves[leaf].content, range: removedRange)
        }
        leaves[leaf].content.removeSubrange(removedRange)
        leaves[leaf].content.trimCapacity()
        if !moveIntoNeighbouringTombstones(leaf, run: run, offset: offset, count: count) {
            var target = run
            if offset > 0 {
                splitRun(leaf, run, at: offset)
                target += 1
            }
            if count < Int(leaves[leaf].runs[target].length) { splitRun(leaf, target, at: count) }
            leaves[leaf].runs[target].isDeleted = true
            coalesce(leaf, around: target)
        }
        leaves[leaf].breaks -= breaks
        adjustCounts(from: leaf, visible: -count, breaks: -breaks)
        // The visible part of the run before the removed elements keeps its index and start:
        // the next backspace finds it through the hint (a split or merge below forgets it).
        if offset > 0 {
            hintLeaf = Int32(leaf)
            hintRun = run
            hintStart = contentStart
        }
        if let report { report(.removed(at: visibleStart(of: leaf) + contentIndex, elements: removed)) }
        // Splitting a run may have taken the leaf past its run capacity; else it may have become small.
        normalize(leaf)
        mergeIfSmall(leaf)
    }

    /// The common removals at the edge of a run that a tombstone run of the same insertion
    /// continues (backspace after a backspace, delete after a delete): the boundary between the
    /// two runs moves, and no run is split or joined. Returns false when that does not apply.
    @inline(__always)
    private func moveIntoNeighbouringTombstones(_ leaf: Int, run: Int, offset: Int, count: Int) -> Bool {
        let r = leaves[leaf].runs[run]
        // The run as it would read once removed: does a tombstone run continue it, or it one?
        var asRemoved = r
        asRemoved.isDeleted = true
        let n = UInt64(count)
        if offset > 0, offset + count == Int(r.length), run + 1 < leaves[leaf].runs.count {
            guard Self.continues(asRemoved, leaves[leaf].runs[run + 1]) else { return false }
            leaves[leaf].runs[run].length -= UInt32(count)
            leaves[leaf].runs[run + 1].counter -= n
            leaves[leaf].runs[run + 1].lamport -= n
            leaves[leaf].runs[run + 1].anchorCounter -= n
            leaves[leaf].runs[run + 1].length += UInt32(count)
            return true
        }
        if offset == 0, count < Int(r.length), run > 0 {
            guard Self.continues(leaves[leaf].runs[run - 1], asRemoved) else { return false }
            leaves[leaf].runs[run - 1].length += UInt32(count)
            leaves[leaf].runs[run].counter += n
            leaves[leaf].runs[run].lamport += n
            leaves[leaf].runs[run].anchorReplica = r.replica
            leaves[leaf].runs[run].anchorCounter = r.counter + n - 1
            leaves[leaf].runs[run].length -= UInt32(count)
            return true
        }
        return false
    }

    enum Integration { case applied, waiting, invalid }

    /// The index of `leaf`'s first visible element, for reporting a change there: through the
    /// edit cursor when it is on `leaf`, else found (O(log n)) and kept in the cursor, so a run
    /// of changes in one leaf (typing arriving from a peer) walks the tree once.
    @inline(__always)
    func visibleStart(of leaf: Int) -> Int {
        if cursorLeaf == Int32(leaf) { return cursorStart }
        let visible = start(of: leaf).visible
        cursorLeaf = Int32(leaf)
        cursorStart = visible
        return visible
    }

    /// `locateForEdit` (the leaf thawed), with the number of visible elements before the run in
    /// its leaf, found in the same scan; through the run hint when the hinted run holds the
    /// element (typing or backspacing that arrives from a peer), which needs no scan at all.
    /// - Complexity: O(1) through the hint, else O(runs in one leaf)
    @inline(__always)
    func locateWithStart(replica: UInt16, counter: UInt64) -> (leaf: Int, run: Int, offset: Int, contentStart: Int)? {
        // (The hinted leaf is never frozen: freezing forgets the hint.)
        if hintLeaf != Self.none {
            let hinted = leaves[Int(hintLeaf)].runs[hintRun]
            if hinted.replica == replica, hinted.counter <= counter, counter < hinted.end {
                remoteHintHits &+= 1
                return (Int(hintLeaf), hintRun, Int(counter - hinted.counter), hintStart)
            }
        }
        guard counter < UInt64(idIndex[Int(replica)].count) else { return nil }
        let entry = idIndex[Int(replica)][Int(counter)]
        // `compactedLeaf` (and the decoding sentinels) name no leaf.
        guard Int(entry) < leaves.count else { return nil }
        let leaf = Int(entry)
        if isFrozen(leaf) {
            // Found first, so that an ID dropped by compaction thaws nothing.
            guard let found = locateForEdit(replica: replica, counter: counter) else { return nil }
            return (found.leaf, found.run, found.offset, leaves[found.leaf].contentStart(ofRun: found.run))
        }
        var start = 0
        var r = 0
        let count = leaves[leaf].runs.count
        while r < count {
            let run = leaves[leaf].runs[r]
            if run.replica == replica, run.counter <= counter, counter < run.end {
                return (leaf, r, Int(counter - run.counter), start)
            }
            start &+= run.visibleLength
            r += 1
        }
        return nil
    }

    /// True when run `run` (its first element) is newer than an element of Lamport counter
    /// `lamport` from `replica`: the order of siblings, newest first.
    @inline(__always)
    private func isNewer(_ run: Run, than lamport: UInt64, _ replica: ReplicaID) -> Bool {
        run.lamport != lamport ? run.lamport > lamport : replicas[Int(run.replica)] > replica
    }

    /// The checks of `validationError` that need no lookup in the tree.
    @inline(__always)
    func cheapValidationError(for insertion: ReplicatingArrayInsertion<Element>) -> String? {
        let n = UInt64(insertion.count)
        guard insertion.id.counter <= UInt64.max - n, insertion.lamport <= UInt64.max - n, n <= UInt64(Self.maxRunLength) else {
            return "insertion \(insertion.id) overflows its counters"
        }
        if let anchor = insertion.anchor, anchor.replica == insertion.id.replica, anchor.counter >= insertion.id.counter {
            return "insertion \(insertion.id) is anchored to its own replica's later element \(anchor)"
        }
        if index(of: insertion.id.replica) == nil, replicas.count >= Self.maxReplicas {
            return "insertion \(insertion.id) would make more than \(Self.maxReplicas) replicas in one array"
        }
        return nil
    }

    /// Why `insertion` can never be applied, as far as this copy can tell now; nil otherwise.
    func validationError(for insertion: ReplicatingArrayInsertion<Element>) -> String? {
        if let reason = cheapValidationError(for: insertion) { return reason }
        // (A copy of an insertion already here is a harmless duplicate, wherever it was anchored.)
        if let anchor = insertion.anchor, isCompacted(anchor), insertion.id.counter + UInt64(insertion.count) > known(insertion.id.replica) {
            return "insertion \(insertion.id) is anchored to \(anchor), a removed element this copy has compacted away"
        }
        if let anchor = insertion.anchor, let r = index(of: anchor.replica), let (leaf, run, offset) = locate(replica: r, counter: anchor.counter),
           storedRun(leaf: leaf, run: run).lamport + UInt64(offset) >= insertion.lamport {
            return "insertion \(insertion.id) has Lamport counter \(insertion.lamport), not after its anchor \(anchor)"
        }
        // A known ID must be the same insertion: same Lamport counter (and anchor, for a run start).
        if insertion.count > 0, let r = index(of: insertion.id.replica), let (leaf, run, offset) = locate(replica: r, counter: insertion.id.counter) {
            let existing = storedRun(leaf: leaf, run: run)
            let existingAnchor = offset == 0 ? anchor(of: existing) : ElementID(replica: insertion.id.replica, counter: insertion.id.counter - 1)
            if existing.lamport + UInt64(offset) != insertion.lamport || existingAnchor != insertion.anchor {
                return "insertion \(insertion.id) conflicts with the element this copy has under that ID"
            }
        }
        return nil
    }

    /// Integrates a remote insertion into the anchor tree. Changes nothing when it cannot be
    /// applied yet (a gap in its replica's counters, or its anchor missing; then it is added to
    /// `pendingInsertions` when `holdIfWaiting`) or ever (invalid).
    func integrate(_ original: consuming ReplicatingArrayInsertion<Element>, report: ((ReplicatingArrayChange<Element>) -> Void)?,
                   holdIfWaiting: Bool) -> Integration {
        let n = original.count
        guard n > 0 else { return .applied }
        let have = known(original.id.replica)
        // What is already here must be the same insertion; what is new needs its predecessors.
        if original.id.counter != have {
            if validationError(for: original) != nil { return .invalid }
            if original.id.counter + UInt64(n) <= have { return .applied }
            if original.id.counter > have {
                if holdIfWaiting { pendingInsertions.append(original) }
                return .waiting
            }
            return place(original.droppingFirst(Int(have - original.id.counter)), report: report, holdIfWaiting: holdIfWaiting)
        }
        if cheapValidationError(for: original) != nil { return .invalid }
        return place(original, report: report, holdIfWaiting: holdIfWaiting)
    }

    /// Places an insertion whose first element is its replica's next one.
    private func place(_ insertion: consuming ReplicatingArrayInsertion<Element>, report: ((ReplicatingArrayChange<Element>) -> Void)?,
                       holdIfWaiting: Bool) -> Integration {
        if let anchor = insertion.anchor, !contains(anchor) {
            if holdIfWaiting { pendingInsertions.append(insertion) }
            return .waiting
        }
        // Its place was next to an element that is gone: it can never be placed as its author saw it.
        if let anchor = insertion.anchor, isCompacted(anchor) { return .invalid }

        let me = intern(insertion.id.replica)
        let count = insertion.count
        let stamp = insertion.timestamp
        // Find where the new run goes: right after its anchor, past every newer sibling subtree;
        // `contentIndex` counts the visible elements before `run` in `leaf`.
        var leaf: Int
        var run: Int
        var contentIndex: Int
        var extendable = false
        if let anchor = insertion.anchor, let anchorReplica = index(of: anchor.replica),
           let (l, r, offset, start) = locateWithStart(replica: anchorReplica, counter: anchor.counter) {
            leaf = l
            run = r
            let anchorRun = leaves[leaf].runs[run]
            // Causality: an element is always newer than the element it was inserted after.
            guard anchorRun.lamport + UInt64(offset) < insertion.lamport else { return .invalid }
            if offset + 1 < Int(anchorRun.length) {
                if timestamp(of: anchorRun, offset: offset + 1) < stamp {
                    splitRun(leaf, run, at: offset + 1)
                }
            } else {
                extendable = anchorRun.replica == me && anchorRun.end == insertion.id.counter
                    && anchorRun.lamport + UInt64(anchorRun.length) == insertion.lamport
                    && !anchorRun.isDeleted && !insertion.isRemoved
            }
            // (Read after the split: the anchor's run then ends at the anchor.)
            contentIndex = start + leaves[leaf].runs[run].visibleLength
            run += 1
        } else {
            leaf = Self.firstLeaf
            run = 0
            contentIndex = 0
        }
        // Skip runs that are newer siblings (or their descendants): their first element is newer.
        // The insertion point stays right after the last run skipped, in that run's leaf.
        var scanLeaf = leaf
        var scanRun = run
        var scanStart = contentIndex
        while true {
            if scanRun == leaves[scanLeaf].runs.count {
                guard let next = self.leaf(after: scanLeaf) else { break }
                thaw(next)
                scanLeaf = next
                scanRun = 0
                scanStart = 0
                continue
            }
            let skipped = leaves[scanLeaf].runs[scanRun]
            guard isNewer(skipped, than: insertion.lamport, insertion.id.replica) else { break }
            scanStart &+= skipped.visibleLength
            scanRun += 1
            leaf = scanLeaf
            run = scanRun
            contentIndex = scanStart
            extendable = false
        }

        var at: Int?
        if case .elements(let elements) = insertion.content {
            // The run that holds the new elements and its first visible element, for the hint.
            let hintedRun: Int
            let hintedStart: Int
            if extendable, run > 0, leaves[leaf].runs[run - 1].replica == me, leaves[leaf].runs[run - 1].end == insertion.id.counter {
                hintedRun = run - 1
                hintedStart = contentIndex - Int(leaves[leaf].runs[run - 1].length)
                leaves[leaf].runs[run - 1].length += UInt32(count)
            } else {
                hintedRun = run
                hintedStart = contentIndex
                insertRun(Run(
                    counter: insertion.id.counter, lamport: insertion.lamport,
                    anchorCounter: insertion.anchor?.counter ?? 0, replica: me,
                    anchorReplica: insertion.anchor.map { intern($0.replica) } ?? Self.noReplica,
                    length: UInt32(count), isDeleted: false), at: run, in: leaf)
            }
            let breaks = elements.withContiguousElements { buffer in
                leaves[leaf].content.insert(contentsOf: buffer, at: contentIndex)
                return countBreaks(in: buffer)
            }
            leaves[leaf].breaks += breaks
            adjustCounts(from: leaf, visible: count, breaks: breaks)
            // Set after the change above forgot the previous hint; a split below forgets this one.
            hintLeaf = Int32(leaf)
            hintRun = hintedRun
            hintStart = hintedStart
            if report != nil { at = visibleStart(of: leaf) + contentIndex }
        } else {
            insertRun(Run(
                counter: insertion.id.counter, lamport: insertion.lamport,
                anchorCounter: insertion.anchor?.counter ?? 0, replica: me,
                anchorReplica: insertion.anchor.map { intern($0.replica) } ?? Self.noReplica,
                length: UInt32(count), isDeleted: true), at: run, in: leaf)
            coalesce(leaf, around: run)
        }
        idIndex[Int(me)].append(UInt32(leaf), count: count)
        maxLamport = Swift.max(maxLamport, insertion.lamport + UInt64(count) - 1)
        normalize(leaf)
        if let report, let at, case .elements(let elements) = insertion.content { report(.inserted(at: at, elements: Array(elements))) }
        applyPendingRemovals(of: insertion.id.replica, report: report)
        return .applied
    }

    /// Applies remembered removals whose elements have now arrived.
    private func applyPendingRemovals(of replica: ReplicaID, report: ((ReplicatingArrayChange<Element>) -> Void)?) {
        guard !pendingRemovals.isEmpty, let waiting = pendingRemovals[replica] else { return }
        let have = known(replica)
        var ready = ElementIDRanges()
        var still: [Range<UInt64>] = []
        for range in waiting {
            if range.lowerBound < have {
                ready.append(ElementIDRange(start: ElementID(replica: replica, counter: range.lowerBound),
                                            count: Swift.min(range.upperBound, have) - range.lowerBound))
            }
            if range.upperBound > have { still.append(Swift.max(range.lowerBound, have)..<range.upperBound) }
        }
        guard !ready.isEmpty else { return }
        pendingRemovals[replica] = still.isEmpty ? nil : still
        remove(ready, report: report)
    }

    /// Applies buffered insertions that have become applicable, until none is.
    func releasePending(report: ((ReplicatingArrayChange<Element>) -> Void)?) {
        var progress = !pendingInsertions.isEmpty
        while progress {
            progress = false
            var index = 0
            while index < pendingInsertions.count {
                switch integrate(pendingInsertions[index], report: report, holdIfWaiting: false) {
                case .applied:
                    pendingInsertions.remove(at: index)
                    progress = true
                case .invalid:
                    pendingInsertions.remove(at: index)
                    rejectedOperationCount += 1
                case .waiting:
                    index += 1
                }
            }
        }
    }
}

extension ReplicatingArrayInsertion {
    var isRemoved: Bool {
        if case .removed = content { return true }
        return false
    }
}
