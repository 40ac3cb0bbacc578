import EditingTraces
import Testing
@testable import ReplicatingTypes

/// `growth(from:)` looks up only the replicas a batch names; it must say exactly what the plain
/// definition says (every replica's claim, known elements raised by waiting insertions and by the
/// batch, summed), on random arrays and batches: waiting insertions, insertions of no element,
/// replicas new and known, counters that skip far ahead or near `UInt64.max`.
@Suite struct GrowthOracleTests {
    typealias Op = ReplicatingArrayOperation<Unicode.Scalar>

    /// The definition, over every replica of the array (how `growth(from:)` used to work it out).
    static func oracle(_ array: ReplicatingArray<Unicode.Scalar>, _ operations: [Op]) -> ReplicatingArrayGrowth {
        let storage = array.storage
        var claimed: [ReplicaID: UInt64] = [:]
        for (i, replica) in storage.replicas.enumerated() { claimed[replica] = UInt64(storage.idIndex[i].count) }
        for insertion in storage.pendingInsertions {
            let end = ReplicatingArray<Unicode.Scalar>.saturatingEnd(insertion.id.counter, insertion.count)
            claimed[insertion.id.replica] = max(claimed[insertion.id.replica] ?? 0, end)
        }
        var growth = ReplicatingArrayGrowth()
        var before: UInt64 = 0
        for count in claimed.values { before = ReplicatingArray<Unicode.Scalar>.saturatingAdd(before, count) }
        var after = claimed
        for case .insert(let insertion) in operations {
            let end = ReplicatingArray<Unicode.Scalar>.saturatingEnd(insertion.id.counter, insertion.count)
            after[insertion.id.replica] = max(after[insertion.id.replica] ?? 0, end)
            if insertion.count > 0 {
                growth.lamportEnd = max(growth.lamportEnd, ReplicatingArray<Unicode.Scalar>.saturatingEnd(insertion.lamport, insertion.count - 1))
            }
        }
        for count in after.values { growth.totalElements = ReplicatingArray<Unicode.Scalar>.saturatingAdd(growth.totalElements, count) }
        growth.newElements = growth.totalElements - min(before, growth.totalElements)
        growth.totalReplicas = after.count
        growth.newReplicas = after.count - claimed.count
        return growth
    }

    static func insertion(_ replica: UInt64, counter: UInt64, lamport: UInt64, count: Int, removed: Bool) -> Op {
        .insert(ReplicatingArrayInsertion(id: ElementID(replica: ReplicaID(replica), counter: counter), lamport: lamport, anchor: nil,
                                          content: removed ? .removed(count: count) : .elements(InsertedElements(Array(repeating: "q", count: count)))))
    }

    /// A random insertion: one of a few replicas (or a new one), at the counter it expects, past it
    /// (it waits), far past it, or near the end of the counters; of 0 to 3 elements.
    static func randomInsertion(_ random: inout SeededRandom, known: ReplicatingArray<Unicode.Scalar>) -> Op {
        let replica = UInt64.random(in: 1...6, using: &random) + (random.chance(0.1) ? 1_000 : 0)
        let expected = known.versionVector[ReplicaID(replica)]
        let counter: UInt64
        switch Int.random(in: 0..<10, using: &random) {
        case 0: counter = expected + UInt64.random(in: 1...4, using: &random)
        case 1: counter = UInt64.max - UInt64.random(in: 0...2, using: &random)
        case 2: counter = expected + (1 << 40)
        default: counter = expected
        }
        return insertion(replica, counter: counter, lamport: UInt64.random(in: 1...50, using: &random),
                         count: Int.random(in: 0...3, using: &random), removed: random.chance(0.2))
    }

    @Test(arguments: 1...20)
    func growthIsWhatTheDefinitionSays(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var array = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1))
        if random.chance(0.5) { array.insert(contentsOf: Array("hello".unicodeScalars), at: 0) }
        for _ in 0..<30 {
            let batch = (0..<Int.random(in: 0...6, using: &random)).map { _ in Self.randomInsertion(&random, known: array) }
            let growth = array.growth(from: batch)
            #expect(growth == Self.oracle(array, batch), "seed \(seed): \(batch)")
            #expect(array.claimedElementCount == Self.oracle(array, []).totalElements, "seed \(seed)")
            // Some of it goes in (what can apply, and what waits), as a peer's batch would.
            for op in batch where random.chance(0.6) {
                if case .insert(let insertion) = op, insertion.id.counter > UInt64.max / 2 { continue }
                array.integrate(op)
            }
        }
    }
}
