/// Removing a cut (a local removal that spans several runs) in one pass per leaf, leaving exactly
/// what removing it run by run leaves.
///
/// Run by run (`removeVisible` once per run, as `removeLocallyRunByRun` does), each run's removal
/// moves the rest of the leaf's content and runs, and a cut of a few thousand characters over a
/// fragmented leaf moves the same bytes dozens of times. Here the runs a leaf's part of the cut
/// touches are rewritten once and its content is removed once. The result is the same, run for
/// run, because each step of the run-by-run removal is reproduced:
/// - a chunk is the rest of the cut within the next visible run (the first one from the cut's
///   first element, the following ones whole runs, the last one possibly a part);
/// - its elements become a tombstone run (split off the run where the chunk starts or ends inside
///   it, the pieces anchored as `splitRun` anchors them), joined with the run before it when that
///   one continues it, and with the run after it when that one continues it (`coalesce`, or the
///   equal `moveIntoNeighbouringTombstones`); tombstones already there are joined with nothing else;
/// - between chunks, the removal run by run checks whether the leaf has to split (`normalize`)
///   or may merge with a neighbour (`mergeIfSmall`): the pass stops after the first chunk where
///   either could act, and they are called then, as run by run. A merge check that cannot act (a
///   leaf not small, or neighbours whose content does not fit) changes nothing, not even a thaw.
/// The leaves, their runs, their frozen state, the ID index and the counts are therefore those of
/// the run-by-run removal (`CutFuzzTests` compares them); only spare capacity may differ.
extension ReplicatingArrayStorage {
    /// Removes up to `limit` visible elements starting at visible element `index` of `leaf` (a
    /// thawed leaf holding it), the first in run `run` at `offset`, `contentStart` visible
    /// elements before that run; stops at the end of the leaf's visible elements or where the
    /// leaf may split or merge. Appends the removed IDs to `ranges` (as run by run does) and
    /// returns how many elements it removed.
    /// - Complexity: O(runs and content of the leaf)
    func removeChunks(_ leaf: Int, run firstRun: Int, offset firstOffset: Int, contentStart: Int, limit: Int,
                      ranges: inout ElementIDRanges) -> Int {
        let contentBefore = leaves[leaf].content.count
        let next = leaves[leaf].next
        let previous = leaves[leaf].previous
        let nextContent = next == Self.none ? nil : leaves[Int(next)].content.count
        let previousContent = previous == Self.none ? nil : leaves[Int(previous)].content.count
        let runCount = leaves[leaf].runs.count
        // The runs rewritten, from the one before the first chunk (which the first tombstone may
        // join) to `r`, the first not yet read.
        let base = Swift.max(firstRun - 1, 0)
        var out = ContiguousArray<Run>()
        out.reserveCapacity(runCount - base + 2)
        for i in base..<firstRun { out.append(leaves[leaf].runs[i]) }
        var r = firstRun
        var offset = firstOffset
        var removed = 0
        var chunks = 0
        while true {
            let run = leaves[leaf].runs[r]
            let take = Swift.min(Int(run.length) - offset, limit - removed)
            let startCounter = run.counter + UInt64(offset)
            let replica = replicas[Int(run.replica)]
            if let last = ranges.last, last.start.replica == replica, last.counters.upperBound == startCounter {
                ranges[ranges.count - 1].count += UInt64(take)
            } else {
                ranges.append(ElementIDRange(start: ElementID(replica: replica, counter: startCounter), count: UInt64(take)))
            }
            // The chunk's elements as a tombstone run, split off as `splitRun` splits.
            var target = run
            if offset > 0 {
                var left = run
                left.length = UInt32(offset)
                out.append(left)
                target.counter = startCounter
                target.lamport = run.lamport + UInt64(offset)
                target.anchorReplica = run.replica
                target.anchorCounter = startCounter - 1
            }
            target.length = UInt32(take)
            target.isDeleted = true
            r += 1
            if let last = out.last, Self.continues(last, target) {
                out[out.count - 1].length += UInt32(take)
            } else {
                out.append(target)
            }
            let end = offset + take
            if end < Int(run.length) {
                // The visible rest of the run, after the last chunk.
                var right = run
                right.counter = run.counter + UInt64(end)
                right.lamport = run.lamport + UInt64(end)
                right.anchorReplica = run.replica
                right.anchorCounter = right.counter - 1
                right.length = run.length - UInt32(end)
                out.append(right)
            } else if r < runCount, Self.continues(out[out.count - 1], leaves[leaf].runs[r]) {
                // A tombstone run right after that continues it (joined with the tombstone
                // itself or, equally, with the run it joined before).
                out[out.count - 1].length += leaves[leaf].runs[r].length
                r += 1
            }
            removed += take
            chunks += 1
            offset = 0
            if removed == limit { break }
            // What removal run by run checks after each chunk: a split, then a merge.
            let runsAfter = base + out.count + (runCount - r)
            if runsAfter > Self.maxRunsPerLeaf { break }
            let contentAfter = contentBefore - removed
            if contentAfter <= Self.maxContentPerLeaf / 4, runsAfter <= Self.maxRunsPerLeaf / 2 {
                let room = Self.maxContentPerLeaf * 3 / 4
                if let nextContent, contentAfter + nextContent <= room { break }
                if let previousContent, previousContent + contentAfter <= room { break }
            }
            // The next chunk is in the next visible run; tombstones before it stay as they are.
            while r < runCount, leaves[leaf].runs[r].isDeleted {
                out.append(leaves[leaf].runs[r])
                r += 1
            }
            if r == runCount { break }
        }
        let grown = out.count - (r - base)
        if grown > 0 { reserveRuns(grown, in: leaf) }
        leaves[leaf].runs.replaceSubrange(base..<r, with: out)

        let first = contentStart + firstOffset
        let removedRange = first..<(first + removed)
        let breaks = leaves[leaf].breaks == 0 ? 0 : countBreaks(in: leaves[leaf].content, range: removedRange)
        leaves[leaf].content.removeSubrange(removedRange)
        leaves[leaf].content.trimCapacity()
        leaves[leaf].breaks -= breaks
        adjustCounts(from: leaf, visible: -removed, breaks: -breaks)
        // As `removeVisible` leaves it: the hint on the visible part before a removal that
        // started inside a run (only a first chunk does).
        if chunks == 1, firstOffset > 0 {
            hintLeaf = Int32(leaf)
            hintRun = firstRun
            hintStart = contentStart
        }
        normalize(leaf)
        mergeIfSmall(leaf)
        return removed
    }

    /// Adds the IDs of `count` elements of run `run` of `leaf` from `offset` to `ranges`,
    /// extending its last range when they continue it.
    @inline(__always)
    func appendRemoved(leaf: Int, run: Int, offset: Int, count: Int, to ranges: inout ElementIDRanges) {
        let start = id(leaf: leaf, run: run, offset: offset)
        if let last = ranges.last, last.start.replica == start.replica, last.counters.upperBound == start.counter {
            ranges[ranges.count - 1].count += UInt64(count)
        } else {
            ranges.append(ElementIDRange(start: start, count: UInt64(count)))
        }
    }
}
