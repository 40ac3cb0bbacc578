import EditingTraces
import ReplicatingTypes

/// Figures for one trace: the gap-buffer floor, local and remote replay, merge of concurrent
/// halves, memory and encoded sizes.
struct TraceBenchmark {
    let trace: EditingTrace
    let repetitions: Int

    struct Result {
        var floorSeconds = 0.0
        var localSeconds = 0.0
        var localFreshBufferSeconds = 0.0
        var remoteSeconds = 0.0
        var remoteReportingSeconds = 0.0
        var mergeSeconds = 0.0
        var finalTextMatches = false
        var remoteMatches = false
        var liveCharacters = 0
        var heapBytes = 0
        var runs = 0
        var averageKeystrokeBytes = 0.0
        var encodedStateBytes = 0
        /// The same document once every tombstone is dropped (DESIGN: bounded by live text).
        var compactedHeapBytes = 0
        var compactedStateBytes = 0
        var droppedTombstones = 0
        var compactionSeconds = 0.0
        var decodeSeconds = 0.0
        var statistics = ""
        /// Where the compacted document's memory goes.
        var compactedStatistics = ""
    }

    static func makeArray(_ replica: UInt64) -> ReplicatingArray<Unicode.Scalar> {
        ReplicatingArray(replica: ReplicaID(replica), paragraphBreak: ReplicatingText.isLineBreak)
    }

    /// One edit at a time through the public API, keeping every returned operation.
    static func replay(_ patches: ArraySlice<EditingTrace.Patch>, into array: inout ReplicatingArray<Unicode.Scalar>,
                       operations: inout [ReplicatingArrayOperation<Unicode.Scalar>]) {
        // Through a pointer, so the harness neither copies a patch nor counts references to its text.
        patches.withUnsafeBufferPointer { buffer in
            guard let patch = buffer.baseAddress else { return }
            for i in 0..<buffer.count {
                let position = patch[i].position, removeCount = patch[i].removeCount
                if removeCount > 0, let op = array.removeSubrange(position..<(position + removeCount)) {
                    operations.append(op)
                }
                // A keystroke goes in as one element, a paste as a collection.
                switch patch[i].insert.count {
                case 0: break
                case 1: operations.append(array.insert(patch[i].insert[0], at: position))
                default: if let op = array.insert(contentsOf: patch[i].insert, at: position) { operations.append(op) }
                }
            }
        }
    }

    /// Room for every operation a replay of `patches` patches makes (a removal and an insertion
    /// each, at most), so that collecting them never grows the buffer.
    static func maxOperations(_ patches: Int) -> Int { 2 * patches }

    /// Every operation applied as a remote one, without working out visible changes.
    @inline(never)
    static func integrate(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], into array: inout ReplicatingArray<Unicode.Scalar>) {
        for op in operations { array.integrate(op) }
    }

    func run() -> Result {
        var result = Result()
        let patches = trace.patches
        let endScalars = Array(trace.endContent.unicodeScalars)

        // Memory: heap held by a freshly replayed array, tombstones and indexes included. First,
        // while the heap is fresh: arrays take the usable size of the block malloc hands them, so
        // blocks freed by earlier measurements would inflate their capacities (by up to a quarter).
        var kept: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        kept.reserveCapacity(Self.maxOperations(patches.count))
        let before = Measure.heapInUse()
        var measured = Self.makeArray(1)
        Self.replay(patches[...], into: &measured, operations: &kept)
        kept.removeAll(keepingCapacity: true)  // the buffer was counted in `before`; what operations own is not
        result.heapBytes = Measure.heapInUse() - before
        kept = []
        result.statistics = measured._storageStatistics.description
        // Dropping every tombstone (what a document no other copy refers to may do). First, a
        // small document compacted unmeasured: the first compaction in the process also allocates
        // the runtime's records of the types it uses (tens of KiB), which are not the document's.
        // (Small, so that the blocks it frees, which malloc's thread cache keeps and counts as in
        // use, are few.)
        do {
            var warmUp = Self.makeArray(2)
            _ = warmUp.insert(contentsOf: Array(String(repeating: "let x = 1\n", count: 300).unicodeScalars), at: 0)
            for i in stride(from: 2_900, to: 0, by: -97) { _ = warmUp.removeSubrange(i..<(i + 1)) }
            warmUp.dropTombstones()
            precondition(warmUp.tombstoneCount == 0)
        }
        // The compacted copy is a new storage, made while the original is still held (its
        // lifetime extended, so that the optimizer frees it neither during nor before the
        // measurement): what the heap grew by is the copy's size.
        var compacted = measured
        withExtendedLifetime(measured) {
            let beforeCompaction = Measure.heapInUse()
            result.compactionSeconds = Measure.median(1) { result.droppedTombstones = compacted.dropTombstones() }
            result.compactedHeapBytes = Measure.heapInUse() - beforeCompaction
        }
        measured = Self.makeArray(1)
        precondition(compacted.elements == endScalars, "compaction changed the text")
        result.compactedStatistics = compacted._storageStatistics.description
        result.compactedStateBytes = compacted.encodedState().count
        compacted = Self.makeArray(1)

        result.floorSeconds = Measure.median(repetitions) {
            var buffer = GapBuffer<Unicode.Scalar>(capacity: 1024, filler: " ")
            patches.withUnsafeBufferPointer { patches in
                guard let patch = patches.baseAddress else { return }
                for i in 0..<patches.count { buffer.replace(at: patch[i].position, removing: patch[i].removeCount, with: patch[i].insert) }
            }
            precondition(buffer.count == endScalars.count)
        }

        // The operations go to one buffer that every repetition reuses (emptied untimed), as a
        // client that ships each operation reuses its memory. Each repetition's array is kept
        // until all are done, so that no timed repetition pays for freeing the previous one's.
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        operations.reserveCapacity(Self.maxOperations(patches.count))
        var replayed: [ReplicatingArray<Unicode.Scalar>] = []
        replayed.reserveCapacity(2 * repetitions + 1)
        result.localSeconds = Measure.median(repetitions, prepare: { operations.removeAll(keepingCapacity: true) }) {
            var array = Self.makeArray(1)
            Self.replay(patches[...], into: &array, operations: &operations)
            replayed.append(array)
        }
        // The same with a new operations buffer each time: its pages are new to the process, and
        // the kernel clears each one as the replay first writes to it.
        var freshBuffers: [[ReplicatingArrayOperation<Unicode.Scalar>]] = []
        result.localFreshBufferSeconds = Measure.median(repetitions) {
            var array = Self.makeArray(1)
            var fresh: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            fresh.reserveCapacity(Self.maxOperations(patches.count))
            Self.replay(patches[...], into: &array, operations: &fresh)
            replayed.append(array)
            freshBuffers.append(fresh)
        }
        freshBuffers.removeAll()
        let final = replayed[0]
        replayed.removeAll()
        result.finalTextMatches = final.elements == endScalars
        result.liveCharacters = final.count
        result.runs = final._checkInvariants()

        var remoteReplayed: [ReplicatingArray<Unicode.Scalar>] = []
        remoteReplayed.reserveCapacity(repetitions)
        result.remoteSeconds = Measure.median(repetitions) {
            var remote = Self.makeArray(2)
            Self.integrate(operations, into: &remote)
            remoteReplayed.append(remote)
        }
        // The same, working out each operation's visible changes (what editors are told).
        var changeCount = 0
        result.remoteReportingSeconds = Measure.median(repetitions) {
            var remote = Self.makeArray(2)
            changeCount = 0
            for op in operations { changeCount += remote.apply(op).count }
            remoteReplayed.append(remote)
        }
        result.remoteMatches = remoteReplayed.allSatisfy { $0 == final } && changeCount >= patches.count / 2
        remoteReplayed.removeAll()

        // Two replicas that each made half of the edits concurrently: both replay the first half
        // of the trace as different replicas, then one merges the other's state.
        let half = patches[..<(patches.count / 2)]
        var a = Self.makeArray(3), b = Self.makeArray(4)
        var scratch: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        Self.replay(half, into: &a, operations: &scratch)
        Self.replay(half, into: &b, operations: &scratch)
        var merged = a
        result.mergeSeconds = Measure.median(repetitions) { merged = a.merged(with: b) }
        precondition(merged.count == a.count + b.count && merged == b.merged(with: a), "merge lost or disagreed")

        // Wire: each single-character operation on its own, and the whole final state.
        var keystrokeBytes = 0, keystrokes = 0
        for op in operations {
            switch op {
            case .insert(let ins) where ins.count == 1: break
            case .remove(let ranges) where ranges.count == 1 && ranges[0].count == 1: break
            default: continue
            }
            keystrokeBytes += ReplicatingArrayCoding.encode([op]).count
            keystrokes += 1
        }
        result.averageKeystrokeBytes = keystrokes > 0 ? Double(keystrokeBytes) / Double(keystrokes) : 0
        let state = final.encodedState()
        result.encodedStateBytes = state.count
        result.decodeSeconds = Measure.median(repetitions) {
            let decoded = try? ReplicatingArray<Unicode.Scalar>(decodingState: state, replica: ReplicaID(5), paragraphBreak: ReplicatingText.isLineBreak)
            precondition(decoded?.count == final.count)
        }
        return result
    }
}
