import EditingTraces
import Foundation
import Testing
@testable import ReplicatingTypes

/// Dropping tombstones: what stays, what is refused afterwards, and the document-order state.
@Suite struct CompactionTests {
    typealias Array = ReplicatingArray<Unicode.Scalar>
    typealias Operation = ReplicatingArrayOperation<Unicode.Scalar>

    static func makeArray(_ replica: UInt64) -> Array {
        ReplicatingArray(replica: ReplicaID(replica), paragraphBreak: { $0 == "\n" })
    }

    /// One random local edit; returns its operations.
    static func randomEdit(_ array: inout Array, using random: inout SeededRandom) -> [Operation] {
        if array.isEmpty || random.chance(0.6) {
            let at = Int.random(in: 0...array.count, using: &random)
            let text = (0..<Int.random(in: 1...4, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
            return array.insert(contentsOf: text, at: at).map { [$0] } ?? []
        }
        let at = Int.random(in: 0..<array.count, using: &random)
        let n = Int.random(in: 1...Swift.min(5, array.count - at), using: &random)
        return array.removeSubrange(at..<(at + n)).map { [$0] } ?? []
    }

    /// Three replicas edit and exchange everything, so every removal is seen by all.
    static func convergedReplicas(seed: UInt64, edits: Int) -> [Array] {
        var random = SeededRandom(seed: seed)
        var replicas = (1...3).map { makeArray(UInt64($0)) }
        var log: [Operation] = []
        for _ in 0..<edits {
            let r = Int.random(in: 0..<3, using: &random)
            log.append(contentsOf: randomEdit(&replicas[r], using: &random))
        }
        for r in 0..<3 { for op in log { replicas[r].integrate(op) } }
        return replicas
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func droppingTombstonesKeepsTextOrderAndVersion(seed: UInt64) {
        var replicas = Self.convergedReplicas(seed: seed, edits: 300)
        let before = replicas[0]
        let tombstones = before.tombstoneCount
        #expect(tombstones > 0)
        let dropped = replicas[0].dropTombstones()
        replicas[0]._checkInvariants()
        #expect(dropped == tombstones && replicas[0].compactedCount == tombstones && replicas[0].tombstoneCount == 0)
        #expect(replicas[0].elements == before.elements)
        #expect(replicas[0].versionVector == before.versionVector)
        #expect(replicas[0].removedIDs.isEmpty)
        // Editing goes on: operations made after the compaction apply everywhere, to the compacted
        // copy and to copies that kept their tombstones, and all converge.
        var random = SeededRandom(seed: seed &+ 100)
        var log: [Operation] = []
        for _ in 0..<300 {
            let r = Int.random(in: 0..<3, using: &random)
            log.append(contentsOf: Self.randomEdit(&replicas[r], using: &random))
        }
        for r in 0..<3 { for op in log.shuffled(using: &random) { replicas[r].integrate(op) } }
        for r in 0..<3 {
            replicas[r]._checkInvariants()
            #expect(replicas[r].pendingOperationCount == 0 && replicas[r].rejectedOperationCount == 0)
            #expect(replicas[r].elements == replicas[1].elements, "seed \(seed): replica \(r) differs")
        }
    }

    /// Replicas edit with messages delayed, duplicated and reordered; at quiescent points (every
    /// message delivered) each replica drops tombstones on its own, keeping a random part; editing
    /// goes on. Every replica converges, and nothing is ever refused.
    @Test(arguments: testSeeds([31, 32, 33, 34]))
    func compactingAtQuiescentPointsNeverBreaksConvergence(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var replicas = (1...3).map { Self.makeArray(UInt64($0)) }
        var inFlight: [(to: Int, operation: Operation)] = []
        for phase in 0..<5 {
            for _ in 0..<150 {
                if random.chance(0.5) || inFlight.isEmpty {
                    let r = Int.random(in: 0..<3, using: &random)
                    for op in Self.randomEdit(&replicas[r], using: &random) {
                        for to in 0..<3 where to != r { inFlight.append((to, op)) }
                    }
                } else {
                    let index = Int.random(in: 0..<inFlight.count, using: &random)
                    let message = inFlight[index]
                    if !random.chance(0.1) { inFlight.remove(at: index) }   // else delivered twice
                    replicas[message.to].integrate(message.operation)
                }
            }
            // Quiescence: everything delivered, then each replica drops what it likes of its tombstones.
            for message in inFlight.shuffled(using: &random) { replicas[message.to].integrate(message.operation) }
            inFlight.removeAll()
            for r in 0..<3 {
                let removed = replicas[r].removedIDs
                let keep = removed.filter { _ in random.chance(0.3) }
                replicas[r].dropTombstones(keeping: keep)
                replicas[r]._checkInvariants()
                #expect(replicas[r].elements == replicas[0].elements, "seed \(seed), phase \(phase): replica \(r) differs")
            }
        }
        for r in 0..<3 {
            #expect(replicas[r].rejectedOperationCount == 0 && replicas[r].pendingOperationCount == 0, "seed \(seed): replica \(r)")
            #expect(replicas[r].versionVector == replicas[0].versionVector)
        }
    }

    @Test func keptTombstonesStayAndCanStillBeRestoredAfter() {
        var a = Self.makeArray(1)
        a.insert(contentsOf: Swift.Array("hello world".unicodeScalars), at: 0)
        let o = a.id(at: 4), space = a.id(at: 5), w = a.id(at: 6)
        a.removeSubrange(4..<7) // "hellorld"
        let dropped = a.dropTombstones(keeping: [ElementIDRange(start: space, count: 1)])
        #expect(dropped == 2 && a.tombstoneCount == 1)
        #expect(a.isCompacted(o) && a.isCompacted(w) && !a.isCompacted(space) && a.contains(o))
        // Restoring after a kept tombstone works; after a dropped one it is refused.
        #expect(a.insert(contentsOf: Swift.Array(" ".unicodeScalars), after: space) != nil)
        #expect(String(String.UnicodeScalarView(a.elements)) == "hell orld")
        #expect(a.insert(contentsOf: Swift.Array("w".unicodeScalars), after: w) == nil)
        a._checkInvariants()
    }

    @Test func onlyCandidatesOutsideKeepAreDropped() {
        var a = Self.makeArray(1)
        a.insert(contentsOf: Swift.Array("abcdefgh".unicodeScalars), at: 0)
        let ids = (0..<8).map { a.id(at: $0) }
        a.removeSubrange(1..<7)                                     // "ah"; b...g removed
        let candidates = [ElementIDRange(start: ids[1], count: 4)]  // b c d e
        let dropped = a.dropTombstones(in: candidates, keeping: [ElementIDRange(start: ids[2], count: 1)])
        #expect(dropped == 3 && a.tombstoneCount == 3)              // c kept; f, g not candidates
        #expect(a.isCompacted(ids[1]) && !a.isCompacted(ids[2]) && a.isCompacted(ids[3]) && a.isCompacted(ids[4]) && !a.isCompacted(ids[5]))
        #expect(String(String.UnicodeScalarView(a.elements)) == "ah")
        a._checkInvariants()
        let set = ElementIDRangeSet(candidates)
        #expect(set.intersects([ElementIDRange(start: ids[4], count: 3)]) && !set.intersects([ElementIDRange(start: ids[5], count: 3)]))
        #expect(set.complement(of: ElementIDRange(start: ids[0], count: 8)) == [ElementIDRange(start: ids[0], count: 1), ElementIDRange(start: ids[5], count: 3)])
    }

    @Test func insertionAnchoredToACompactedElementIsRefusedAndChangesNothing() {
        var a = Self.makeArray(1)
        a.insert(contentsOf: Swift.Array("abc".unicodeScalars), at: 0)
        var lagging = a                      // has not seen the removal of "b"
        lagging.replica = ReplicaID(2)
        a.removeSubrange(1..<2)
        a.dropTombstones()
        let late = lagging.insert(contentsOf: Swift.Array("X".unicodeScalars), at: 2)! // anchored to "b"
        let reason = a.validationError(for: late)
        #expect(reason?.contains("compacted") == true)
        let text = a.elements
        #expect(a.apply(late).isEmpty)
        #expect(a.elements == text && a.rejectedOperationCount == 1 && a.pendingOperationCount == 0)
    }

    @Test func aDuplicateOfAnInsertionAnchoredToACompactedElementIsAHarmlessNoOp() {
        var a = Self.makeArray(1)
        a.insert(contentsOf: Swift.Array("abc".unicodeScalars), at: 0)
        var b = a
        b.replica = ReplicaID(2)
        let x = b.insert(contentsOf: Swift.Array("X".unicodeScalars), at: 2)!  // "abXc", anchored to "b"
        a.apply(x)
        a.removeSubrange(1..<2)                                                 // "aXc"
        a.dropTombstones()
        #expect(a.validationError(for: x) == nil, "a copy arriving late by another path")
        #expect(a.apply(x).isEmpty && a.rejectedOperationCount == 0)
        #expect(String(String.UnicodeScalarView(a.elements)) == "aXc")
    }

    @Test func aRemovalNamingCompactedElementsStillRemovesTheRest() {
        var a = Self.makeArray(1)
        a.insert(contentsOf: Swift.Array("abcdef".unicodeScalars), at: 0)
        let b = a.id(at: 1)
        a.removeSubrange(1..<2)
        a.dropTombstones()
        // One range over "b" (compacted) through "e": "c", "d", "e" go.
        let changes = a.apply(.remove([ElementIDRange(start: b, count: 4)]))
        #expect(String(String.UnicodeScalarView(a.elements)) == "af")
        #expect(changes.count == 1)
        a._checkInvariants()
    }

    @Test(arguments: [4, 5] as [UInt64])
    func aCompactedStateTravelsInDocumentOrderAndRoundTrips(seed: UInt64) throws {
        var replicas = Self.convergedReplicas(seed: seed, edits: 400)
        let plain = replicas[0].encodedState()
        #expect(plain.first == 1)
        replicas[0].dropTombstones()
        let bytes = replicas[0].encodedState()
        #expect(bytes.first == 2)
        let decoded = try Array(decodingState: bytes, replica: ReplicaID(9), paragraphBreak: { $0 == "\n" })
        decoded._checkInvariants()
        #expect(decoded == replicas[0])
        #expect(decoded.compactedCount == replicas[0].compactedCount && decoded.versionVector == replicas[0].versionVector)
        // The decoded copy keeps editing with the others.
        var copy = decoded
        var random = SeededRandom(seed: seed)
        var log: [Operation] = []
        for _ in 0..<100 { log.append(contentsOf: Self.randomEdit(&copy, using: &random)) }
        for op in log { replicas[1].integrate(op) }
        #expect(replicas[1].elements == copy.elements && replicas[1].rejectedOperationCount == 0)
    }

    @Test func aDamagedDocumentOrderStateIsRefusedOrConsistent() {
        var replicas = Self.convergedReplicas(seed: 6, edits: 200)
        replicas[0].dropTombstones()
        let bytes = replicas[0].encodedState()
        var random = SeededRandom(seed: 7)
        var refused = 0
        for _ in 0..<400 {
            var damaged = bytes
            if random.chance(0.3) {
                damaged.removeLast(Int.random(in: 1...damaged.count - 1, using: &random))
            } else {
                damaged[Int.random(in: 1..<damaged.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            }
            do {
                let decoded = try Array(decodingState: damaged, replica: ReplicaID(9), paragraphBreak: { $0 == "\n" })
                decoded._checkInvariants()
            } catch {
                refused += 1
            }
        }
        #expect(refused > 200)
    }

    @Test func aCompactedArrayRefusesToEncodeAsOperationsInJSON() throws {
        var a = ReplicatingArray<Int>(replica: ReplicaID(1))
        a.insert(contentsOf: [1, 2], at: 0)
        #expect(try JSONEncoder().encode(a).count > 0)
        a.removeSubrange(0..<1)
        a.dropTombstones()
        #expect(throws: EncodingError.self) { _ = try JSONEncoder().encode(a) }
    }
}
