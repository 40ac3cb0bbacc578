import EditingTraces
import ReplicatingTypes

/// The catch-up of a peer that missed a trace's edits, as a daemon does it: the sender works out
/// what the peer lacks from its version vector (`operations(since:)`), encodes it for the wire,
/// and the peer decodes it and applies it, working out the visible changes its editors are told.
/// Measured for a peer that has nothing and for one that missed the second half of the edits,
/// each next to the local replay of the same edits (issue 23: within 2x of it).
struct CatchUpBenchmark {
    let trace: EditingTrace
    let repetitions: Int

    struct Result {
        /// A peer with nothing, and the local replay of the whole trace.
        var fromNothingSeconds = 0.0
        var wholeLocalSeconds = 0.0
        var fromNothingBytes = 0
        /// A peer that has the first half of the edits, and the local replay of the second half.
        var secondHalfSeconds = 0.0
        var secondHalfLocalSeconds = 0.0
        var secondHalfBytes = 0
        var matches = false
    }

    func run() -> Result {
        var result = Result()
        let patches = trace.patches
        let half = patches.count / 2
        var scratch: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        scratch.reserveCapacity(TraceBenchmark.maxOperations(patches.count))

        var final = TraceBenchmark.makeArray(1)
        TraceBenchmark.replay(patches[...], into: &final, operations: &scratch)
        let allOperations = scratch
        scratch.removeAll(keepingCapacity: true)
        var halfLocal = TraceBenchmark.makeArray(1)
        TraceBenchmark.replay(patches[..<half], into: &halfLocal, operations: &scratch)
        let halfOperations = Array(allOperations[..<scratch.count])
        let halfVersion = halfLocal.versionVector
        scratch.removeAll(keepingCapacity: true)

        var kept: [ReplicatingArray<Unicode.Scalar>] = []
        kept.reserveCapacity(4 * repetitions)
        result.wholeLocalSeconds = Measure.median(repetitions, prepare: { scratch.removeAll(keepingCapacity: true) }) {
            var array = TraceBenchmark.makeArray(1)
            TraceBenchmark.replay(patches[...], into: &array, operations: &scratch)
            kept.append(array)
        }
        result.fromNothingSeconds = Measure.median(repetitions) {
            let wire = ReplicatingArrayCoding.encode(final.operations())
            result.fromNothingBytes = wire.count
            var peer = TraceBenchmark.makeArray(2)
            if let received = try? ReplicatingArrayCoding.decode(wire, as: Unicode.Scalar.self, maximumOperations: Int.max) {
                _ = peer.apply(contentsOf: received)
            }
            kept.append(peer)
        }
        // Each repetition starts from its own copy of the half-way state, made untimed.
        var start = TraceBenchmark.makeArray(1)
        result.secondHalfLocalSeconds = Measure.median(repetitions, prepare: {
            scratch.removeAll(keepingCapacity: true)
            start = TraceBenchmark.makeArray(1)
            TraceBenchmark.integrate(halfOperations, into: &start)
        }) {
            TraceBenchmark.replay(patches[half...], into: &start, operations: &scratch)
            kept.append(start)
        }
        var peer = TraceBenchmark.makeArray(2)
        result.secondHalfSeconds = Measure.median(repetitions, prepare: {
            peer = TraceBenchmark.makeArray(2)
            TraceBenchmark.integrate(halfOperations, into: &peer)
        }) {
            let wire = ReplicatingArrayCoding.encode(final.operations(since: halfVersion))
            result.secondHalfBytes = wire.count
            if let received = try? ReplicatingArrayCoding.decode(wire, as: Unicode.Scalar.self, maximumOperations: Int.max) {
                _ = peer.apply(contentsOf: received)
            }
            kept.append(peer)
        }
        result.matches = kept.allSatisfy { $0.elements == final.elements } && kept.count == 4 * repetitions
        return result
    }

    /// The catch-up of a peer that missed the second half, `repetitions` times, for profilers.
    func profileSecondHalf() {
        let patches = trace.patches
        let half = patches.count / 2
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        var final = TraceBenchmark.makeArray(1)
        TraceBenchmark.replay(patches[...], into: &final, operations: &operations)
        var halfLocal = TraceBenchmark.makeArray(1)
        var halfOperations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        TraceBenchmark.replay(patches[..<half], into: &halfLocal, operations: &halfOperations)
        var peers: [ReplicatingArray<Unicode.Scalar>] = []
        for _ in 0..<repetitions {
            var peer = TraceBenchmark.makeArray(2)
            TraceBenchmark.integrate(halfOperations, into: &peer)
            peers.append(peer)
        }
        for i in peers.indices {
            let wire = ReplicatingArrayCoding.encode(final.operations(since: halfLocal.versionVector))
            if let received = try? ReplicatingArrayCoding.decode(wire, as: Unicode.Scalar.self, maximumOperations: Int.max) {
                _ = peers[i].apply(contentsOf: received)
            }
        }
        precondition(peers.allSatisfy { $0.elements == final.elements })
    }
}
