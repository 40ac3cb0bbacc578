import EditingTraces
import Testing
@testable import ReplicatingTypes

/// A replica in the simulated network: the CRDT, plus a mirror that only ever changes through
/// local edits and the changes `apply` reports, as an editor's buffer would, and a quiet copy
/// that receives the same operations through `integrate`, which reports nothing.
private struct SimulatedReplica {
    var array: ReplicatingArray<Unicode.Scalar>
    var mirror: [Unicode.Scalar] = []
    var quiet: ReplicatingArray<Unicode.Scalar>

    init(id: UInt64) {
        array = ReplicatingArray(replica: ReplicaID(id), paragraphBreak: { $0 == "\n" })
        quiet = ReplicatingArray(replica: ReplicaID(id), paragraphBreak: { $0 == "\n" })
    }

    mutating func randomEdit(using random: inout SeededRandom) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        let operations = randomLocalEdit(using: &random)
        for operation in operations { quiet.integrate(operation) }
        return operations
    }

    private mutating func randomLocalEdit(using random: inout SeededRandom) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        let count = mirror.count
        if count == 0 || random.chance(0.6) {
            let at = Int.random(in: 0...count, using: &random)
            let text = (0..<Int.random(in: 1...3, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
            mirror.insert(contentsOf: text, at: at)
            return array.insert(contentsOf: text, at: at).map { [$0] } ?? []
        }
        let at = Int.random(in: 0..<count, using: &random)
        let n = Int.random(in: 1...Swift.min(4, count - at), using: &random)
        mirror.removeSubrange(at..<(at + n))
        return array.removeSubrange(at..<(at + n)).map { [$0] } ?? []
    }

    mutating func receive(_ operation: ReplicatingArrayOperation<Unicode.Scalar>) {
        quiet.integrate(operation)
        for change in array.apply(operation) {
            switch change {
            case .inserted(let at, let elements): mirror.insert(contentsOf: elements, at: at)
            case .removed(let at, let removed):
                #expect(Array(mirror[at..<(at + removed.count)]) == removed, "reported removed elements differ")
                mirror.removeSubrange(at..<(at + removed.count))
            }
        }
    }
}

/// A message in flight from one replica to another.
private struct Message {
    var from: Int
    var to: Int
    var operation: ReplicatingArrayOperation<Unicode.Scalar>
}

@Suite struct ReplicatingArrayConvergenceTests {
    /// N replicas edit at random while the network delays, duplicates, reorders and partitions
    /// messages; after healing, all replicas are identical, their mirrors match, nothing is pending.
    @Test(arguments: testSeeds([11, 12, 13, 14, 15, 16]))
    func convergesUnderHostileNetwork(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let n = 3 + Int(seed % 3)
        var replicas = (0..<n).map { SimulatedReplica(id: UInt64($0 + 1)) }
        var inFlight: [Message] = []
        var partitioned = Set<Int>()
        for _ in 0..<800 {
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<8:
                let r = Int.random(in: 0..<n, using: &random)
                for op in replicas[r].randomEdit(using: &random) {
                    for to in 0..<n where to != r { inFlight.append(Message(from: r, to: to, operation: op)) }
                }
            case 8..<17:
                guard !inFlight.isEmpty else { continue }
                let index = Int.random(in: 0..<inFlight.count, using: &random)
                let message = inFlight[index]
                if partitioned.contains(message.from) || partitioned.contains(message.to) { continue }
                if !random.chance(0.1) { inFlight.remove(at: index) } // else: delivered and duplicated
                replicas[message.to].receive(message.operation)
            case 17:
                partitioned.insert(Int.random(in: 0..<n, using: &random))
            case 18:
                partitioned.removeAll()
            default:
                // A state merge between two replicas, as a reconnecting peer might do.
                let a = Int.random(in: 0..<n, using: &random)
                let b = Int.random(in: 0..<n, using: &random)
                guard a != b, !partitioned.contains(a), !partitioned.contains(b) else { continue }
                for op in replicas[b].array.operations(since: replicas[a].array.versionVector) { replicas[a].receive(op) }
            }
        }
        // Heal: deliver everything that is still in flight, in random order.
        inFlight.shuffle(using: &random)
        for message in inFlight { replicas[message.to].receive(message.operation) }
        for r in 0..<n {
            replicas[r].array._checkInvariants()
            #expect(replicas[r].array.pendingOperationCount == 0, "seed \(seed): replica \(r) still has pending operations")
            #expect(replicas[r].mirror == replicas[r].array.elements, "seed \(seed): replica \(r)'s mirror diverged from its array")
            #expect(replicas[r].array == replicas[0].array, "seed \(seed): replica \(r) differs from replica 0")
            #expect(replicas[r].array.elements == replicas[0].array.elements, "seed \(seed)")
            replicas[r].quiet._checkInvariants()
            #expect(replicas[r].quiet == replicas[r].array, "seed \(seed): replica \(r)'s quiet copy differs")
        }
    }

    /// Operations from several replicas, applied in random permutations (not even causal: the
    /// array buffers what arrives early), always give the same state.
    @Test(arguments: [21, 22, 23] as [UInt64])
    func everyDeliveryOrderGivesTheSameState(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var replicas = (0..<3).map { SimulatedReplica(id: UInt64($0 + 1)) }
        var log: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for _ in 0..<150 {
            let r = Int.random(in: 0..<3, using: &random)
            let ops = replicas[r].randomEdit(using: &random)
            log.append(contentsOf: ops)
            if random.chance(0.5) {
                for op in ops { for other in 0..<3 where other != r { replicas[other].receive(op) } }
            }
        }
        var reference = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(99), paragraphBreak: { $0 == "\n" })
        reference.apply(contentsOf: log)
        #expect(reference.pendingOperationCount == 0)
        for _ in 0..<6 {
            var shuffled = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(98), paragraphBreak: { $0 == "\n" })
            shuffled.apply(contentsOf: log.shuffled(using: &random))
            shuffled._checkInvariants()
            #expect(shuffled == reference, "seed \(seed)")
            var quiet = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(97), paragraphBreak: { $0 == "\n" })
            for op in log.shuffled(using: &random) { quiet.integrate(op) }
            quiet._checkInvariants()
            #expect(quiet.pendingOperationCount == 0 && quiet == reference, "seed \(seed): integrate differs from apply")
        }
    }

    @Test func applyingAnOperationTwiceIsANoOp() {
        var a = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1))
        var b = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(2))
        let insert = a.insert(contentsOf: Array("hello".unicodeScalars), at: 0)!
        let remove = a.removeSubrange(1..<3)!
        #expect(!b.apply(insert).isEmpty)
        #expect(!b.apply(remove).isEmpty)
        let snapshot = b
        #expect(b.apply(insert).isEmpty)
        #expect(b.apply(remove).isEmpty)
        #expect(b == snapshot)
        #expect(b.elements.string == "hlo")
    }

    @Test func overlappingInsertionIsTrimmedToWhatIsNew() {
        var a = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1))
        var b = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(2))
        b.apply(a.insert(contentsOf: Array("ab".unicodeScalars), at: 0)!)
        a.insert(contentsOf: Array("cd".unicodeScalars), at: 2)
        // A peer resends the whole run "abcd"; b already has "ab".
        for op in a.operations() { b.apply(op) }
        #expect(b.elements.string == "abcd")
        #expect(b == a)
    }
}

@Suite struct InvalidOperationTests {
    @Test func insertionNotAfterItsAnchorIsRejectedAndChangesNothing() {
        var a = ReplicatingArray<Unicode.Scalar>(Array("abc".unicodeScalars), replica: ReplicaID(1))
        let before = a
        let bogus = ReplicatingArrayOperation<Unicode.Scalar>.insert(ReplicatingArrayInsertion(
            id: ElementID(replica: ReplicaID(2), counter: 0), lamport: 1,
            anchor: ElementID(replica: ReplicaID(1), counter: 2), content: .elements(["x"])))
        #expect(a.validationError(for: bogus) != nil)
        #expect(a.apply(bogus).isEmpty)
        #expect(a == before)
        #expect(a.rejectedOperationCount == 1)
    }

    @Test func duplicateIDWithDifferentHistoryIsRejected() {
        var a = ReplicatingArray<Unicode.Scalar>(Array("abc".unicodeScalars), replica: ReplicaID(1))
        let forged = ReplicatingArrayOperation<Unicode.Scalar>.insert(ReplicatingArrayInsertion(
            id: ElementID(replica: ReplicaID(1), counter: 0), lamport: 40, anchor: nil, content: .elements(["z"])))
        #expect(a.validationError(for: forged) != nil)
        a.apply(forged)
        #expect(a.elements.string == "abc")
    }

    @Test func selfAnchoredInsertionIsRejectedNotBufferedForever() {
        var a = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1))
        a.apply(.insert(ReplicatingArrayInsertion(id: ElementID(replica: ReplicaID(2), counter: 0), lamport: 1,
                                                  anchor: ElementID(replica: ReplicaID(2), counter: 0), content: .elements(["q"]))))
        #expect(a.pendingOperationCount == 0)
        #expect(a.rejectedOperationCount == 1)
    }
}
