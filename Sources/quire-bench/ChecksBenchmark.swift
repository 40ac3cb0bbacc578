import EditingTraces
import Foundation
import QuireDaemon
import ReplicatingTypes

/// What the bound checks of issue 20 cost: a trace's operations applied as a peer's are, with
/// and without the check every operations frame goes through first (`growth(from:)` over the
/// frame, then `PeerBounds.violation`), one operation per frame (live typing), 10,000 per frame
/// (the most a frame holds), and as the catch-up a peer that has nothing is sent
/// (`operations()`: runs and the removal set); the same live frames in a document naming 1,000
/// replicas (the check is O(replicas)); and a local replay with the element bound checked per
/// edit as the daemon checks an editor's edits (`claimedElementCount`).
struct ChecksBenchmark {
    let trace: EditingTrace
    let repetitions: Int

    struct Result {
        var operations = 0
        var liveWithout = 0.0, liveWith = 0.0
        var framedWithout = 0.0, framedWith = 0.0, frames = 0
        var catchUpOperations = 0, catchUpFrames = 0
        var catchUpWithout = 0.0, catchUpWith = 0.0
        var replicas = 0, replicaOperations = 0
        var replicasWithout = 0.0, replicasWith = 0.0
        var localWithout = 0.0, localWith = 0.0
        /// Frames or edits a check refused: none may be, or the figures measure something else.
        var refused = 0
    }

    static let frameOperations = 10_000

    /// Median times of `without` and `with`, run alternately (so drift on a shared machine
    /// falls on both alike), `repetitions` times each.
    static func alternately(_ repetitions: Int, prepare: () -> Void = {}, without: () -> Void, with: () -> Void) -> (Double, Double) {
        var times: ([Double], [Double]) = ([], [])
        for _ in 0..<repetitions {
            prepare()
            times.0.append(Measure.median(1, without))
            prepare()
            times.1.append(Measure.median(1, with))
        }
        return (times.0.sorted()[repetitions / 2], times.1.sorted()[repetitions / 2])
    }

    func run() -> Result {
        var result = Result()
        let limits = Daemon.Configuration()
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        operations.reserveCapacity(TraceBenchmark.maxOperations(trace.patches.count))
        var final = TraceBenchmark.makeArray(1)
        TraceBenchmark.replay(trace.patches[...], into: &final, operations: &operations)
        result.operations = operations.count
        // Every replay's array is kept until its measurement is done, so none pays for freeing another.
        var kept: [ReplicatingArray<Unicode.Scalar>] = []
        kept.reserveCapacity(4 * repetitions)
        func applied(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], framing: Int, checked: Bool,
                     onto start: ReplicatingArray<Unicode.Scalar> = TraceBenchmark.makeArray(2)) -> () -> Void {
            {
                var remote = start
                result.refused += Self.integrate(operations, framing: framing, checked: checked, into: &remote, limits: limits)
                kept.append(remote)
            }
        }

        // Live typing: every operation its own frame.
        (result.liveWithout, result.liveWith) = Self.alternately(repetitions, without: applied(operations, framing: 1, checked: false),
                                                                 with: applied(operations, framing: 1, checked: true))
        precondition(kept.allSatisfy { $0 == final }, "a replay differs from the local one")
        kept.removeAll(keepingCapacity: true)

        // Full frames.
        result.frames = (operations.count + Self.frameOperations - 1) / Self.frameOperations
        (result.framedWithout, result.framedWith) = Self.alternately(
            repetitions, without: applied(operations, framing: Self.frameOperations, checked: false),
            with: applied(operations, framing: Self.frameOperations, checked: true))
        kept.removeAll(keepingCapacity: true)

        // Catch-up of a peer that has nothing: the final document's runs and removal set.
        let catchUp = final.operations()
        result.catchUpOperations = catchUp.count
        result.catchUpFrames = (catchUp.count + Self.frameOperations - 1) / Self.frameOperations
        (result.catchUpWithout, result.catchUpWith) = Self.alternately(
            repetitions, without: applied(catchUp, framing: Self.frameOperations, checked: false),
            with: applied(catchUp, framing: Self.frameOperations, checked: true))
        precondition(kept.allSatisfy { $0 == final }, "a catch-up differs from the local replay")
        kept.removeAll(keepingCapacity: true)

        // Live frames in a document that names 1,000 replicas (a character of each at its start).
        result.replicas = 1_000
        var crowded = TraceBenchmark.makeArray(2)
        for r in 0..<UInt64(result.replicas - 1) {
            crowded.integrate(.insert(ReplicatingArrayInsertion(id: ElementID(replica: ReplicaID(1_000 + r), counter: 0), lamport: 0,
                                                                anchor: nil, content: .elements(["·"]))))
        }
        let prefix = Array(operations.prefix(20_000))
        result.replicaOperations = prefix.count
        (result.replicasWithout, result.replicasWith) = Self.alternately(
            repetitions, without: applied(prefix, framing: 1, checked: false, onto: crowded),
            with: applied(prefix, framing: 1, checked: true, onto: crowded))
        kept.removeAll(keepingCapacity: true)

        // Local typing, with the element bound checked before each edit (as for an editor's).
        var localOperations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        localOperations.reserveCapacity(TraceBenchmark.maxOperations(trace.patches.count))
        func typed(checked: Bool) -> () -> Void {
            {
                var array = TraceBenchmark.makeArray(1)
                result.refused += Self.replay(trace.patches[...], into: &array, operations: &localOperations,
                                              limit: checked ? limits.maximumElementsPerDocument : nil)
                kept.append(array)
            }
        }
        (result.localWithout, result.localWith) = Self.alternately(repetitions, prepare: { localOperations.removeAll(keepingCapacity: true) },
                                                                   without: typed(checked: false), with: typed(checked: true))
        precondition(kept.allSatisfy { $0 == final }, "a checked replay differs")
        return result
    }

    /// Applies `operations` as a peer's frames of `framing` operations; `checked`, each frame
    /// checked first as `PeerLink` checks one before it applies any of it. Returns how many
    /// frames a check refused (they are applied anyway, so the replays stay comparable).
    @inline(never)
    static func integrate(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], framing: Int, checked: Bool,
                          into array: inout ReplicatingArray<Unicode.Scalar>, limits: Daemon.Configuration) -> Int {
        var refused = 0
        if framing == 1 {
            for op in operations {
                if checked, PeerBounds.violation(of: array.growth(from: CollectionOfOne(op)), clock: array.lamportClock, limits: limits) != nil {
                    refused += 1
                }
                array.integrate(op)
            }
            return refused
        }
        var start = 0
        while start < operations.count {
            let frame = operations[start..<Swift.min(start + framing, operations.count)]
            if checked, PeerBounds.violation(of: array.growth(from: frame), clock: array.lamportClock, limits: limits) != nil { refused += 1 }
            for op in frame { array.integrate(op) }
            start += framing
        }
        return refused
    }

    /// `TraceBenchmark.replay`, with (`limit` given) the element bound checked before each edit
    /// as the daemon checks an editor's edit (`ElementRoom`: the elements held, against what the
    /// edit adds); returns how many edits it would have refused.
    static func replay(_ patches: ArraySlice<EditingTrace.Patch>, into array: inout ReplicatingArray<Unicode.Scalar>,
                       operations: inout [ReplicatingArrayOperation<Unicode.Scalar>], limit: Int?) -> Int {
        var refused = 0
        patches.withUnsafeBufferPointer { buffer in
            guard let patch = buffer.baseAddress else { return }
            for i in 0..<buffer.count {
                if let limit {
                    let held = array.claimedElementCount
                    if UInt64(patch[i].insert.count) > UInt64(limit) &- Swift.min(held, UInt64(limit)) { refused += 1 }
                }
                let position = patch[i].position, removeCount = patch[i].removeCount
                if removeCount > 0, let op = array.removeSubrange(position..<(position + removeCount)) {
                    operations.append(op)
                }
                switch patch[i].insert.count {
                case 0: break
                case 1: operations.append(array.insert(patch[i].insert[0], at: position))
                default: if let op = array.insert(contentsOf: patch[i].insert, at: position) { operations.append(op) }
                }
            }
        }
        return refused
    }
}
