import EditingTraces
import Testing
@testable import ReplicatingTypes

/// A cut (a local removal over several runs) is removed a leaf at a time in one pass
/// (`removeChunks`); these tests pin it to the removal run by run it replaces
/// (`removeLocallyRunByRun`): two copies edited alike, one cutting each way, must hold the same
/// leaves in the same order with the same runs, content, break counts and frozen state, the
/// same ID index, free lists and counts, and give the same operations and encodings.
@Suite struct CutFuzzTests {
    typealias Storage = ReplicatingArrayStorage<Unicode.Scalar>
    typealias Array = ReplicatingArray<Unicode.Scalar>

    /// Everything of a storage's layout that an edit can change, but spare capacity.
    struct Layout: Equatable, CustomStringConvertible {
        var leaves: [String] = []
        var idIndex: [[String]] = []
        var freeLeaves: [Int32] = []
        var counts: [Int] = []

        var description: String { leaves.joined(separator: "\n") }
    }

    static func layout(of array: Array) -> Layout {
        let s = array.storage
        var layout = Layout()
        var leaf: Int? = Storage.firstLeaf
        while let l = leaf {
            let runs = s.runs(of: l).map { "\($0.replica):\($0.counter)@\($0.lamport)<\($0.anchorReplica):\($0.anchorCounter) \($0.length)\($0.isDeleted ? "x" : "")" }
            let content = Swift.Array(s.leaves[l].content).string.debugDescription
            layout.leaves.append("leaf \(l)\(s.isFrozen(l) ? " frozen" : "") parent \(s.leaves[l].parent) breaks \(s.leaves[l].breaks): \(runs.joined(separator: " ")) \(content)")
            leaf = s.leaf(after: l)
        }
        // (The column's entries are a function of each counter's leaf: neighbours name different leaves.)
        for replica in s.idIndex.indices { layout.idIndex.append(s.idIndex[replica].runs.map { "\($0.counter)+\($0.length):\($0.leaf)" }) }
        layout.freeLeaves = s.freeLeaves
        layout.counts = [s.count, s.breakCount, s.thawedCount, s.compactedCount, Int(s.maxLamport), s.leaves.count, s.branches.count]
        return layout
    }

    static func makeArray(_ replica: UInt64) -> Array {
        Array(replica: ReplicaID(replica), paragraphBreak: ReplicatingText.isLineBreak)
    }

    static func text(_ count: Int, _ random: inout SeededRandom) -> [Unicode.Scalar] {
        // Mostly one-byte scalars with line breaks (code), sometimes wider ones.
        let alphabet: [Unicode.Scalar] = random.chance(0.8) ? ["a", "b", " ", "\n", "x", "{", "}"] : testAlphabet
        return (0..<count).map { _ in alphabet[random.below(alphabet.count)] }
    }

    /// Two copies (`byLeaf` cuts in one pass, `byRun` run by run) and a peer: scattered typing and
    /// backspacing (short runs, leaves of up to 64 runs), pastes, the peer's typing arriving,
    /// compactions (every leaf but the first frozen, then thawed where edited), and cuts of a
    /// few to a few thousand elements anywhere. After every cut both copies are compared whole.
    @Test(arguments: testSeeds([1, 2, 3, 4, 5, 6]))
    func cuttingALeafAtATimeLeavesWhatRunByRunLeaves(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var byLeaf = Self.makeArray(1)
        var byRun = Self.makeArray(1)
        var peer = Self.makeArray(2)
        let start = Self.text(4_000, &random)
        let inserted = byLeaf.insert(contentsOf: start, at: 0)
        let first = try #require(inserted)
        _ = byRun.insert(contentsOf: start, at: 0)
        peer.integrate(first)
        var cuts = 0, multiLeafCuts = 0, cutsOfFrozenLeaves = 0, compactions = 0
        var cutNext = false
        for step in 0..<1_200 {
            let context = "seed \(seed) step \(step)"
            var local: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            // Right after a compaction, a cut is likely (through frozen leaves).
            let choice = cutNext && random.chance(0.6) ? 99 : random.below(100)
            cutNext = false
            switch choice {
            case 0..<40:
                // A burst of typing somewhere, with a typo or two fixed at once.
                var at = random.below(byLeaf.count + 1)
                for _ in 0..<(1 + random.below(12)) {
                    let scalar = Self.text(1, &random)[0]
                    local.append(byLeaf.insert(scalar, at: at))
                    _ = byRun.insert(scalar, at: at)
                    at += 1
                    if random.chance(0.15) {
                        let backspace = byLeaf.removeSubrange((at - 1)..<at)
                        local.append(try #require(backspace))
                        _ = byRun.removeSubrange((at - 1)..<at)
                        at -= 1
                    }
                }
            case 40..<50:
                let pasted = Self.text(1 + random.below(random.chance(0.3) ? 2_500 : 80), &random)
                let at = random.below(byLeaf.count + 1)
                let paste = byLeaf.insert(contentsOf: pasted, at: at)
                local.append(try #require(paste))
                _ = byRun.insert(contentsOf: pasted, at: at)
            case 50..<62:
                // The peer types; both copies receive it.
                var at = random.below(peer.count + 1)
                var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
                for _ in 0..<(1 + random.below(8)) {
                    operations.append(peer.insert(Self.text(1, &random)[0], at: at))
                    at += 1
                }
                if peer.count > 10, random.chance(0.3) {
                    let from = random.below(peer.count - 5)
                    let removal = peer.removeSubrange(from..<(from + 1 + random.below(5)))
                    operations.append(try #require(removal))
                }
                for operation in operations {
                    byLeaf.integrate(operation)
                    byRun.integrate(operation)
                }
            case 62..<65:
                // Every tombstone dropped: leaves frozen (the peer, which may anchor to them, is
                // replaced by a copy of the state).
                let dropped = byLeaf.dropTombstones()
                #expect(byRun.dropTombstones() == dropped, "\(context)")
                peer = try Array(decodingState: byLeaf.encodedState(), replica: ReplicaID(2), paragraphBreak: ReplicatingText.isLineBreak)
                compactions += 1
                cutNext = true
                #expect(Self.layout(of: byLeaf) == Self.layout(of: byRun), "\(context): compaction")
            default:
                guard byLeaf.count > 2 else { continue }
                let length = 2 + random.below(random.chance(0.4) ? 3_000 : 200)
                let from = random.below(byLeaf.count - 1)
                let range = from..<Swift.min(byLeaf.count, from + length)
                let leavesBefore = byLeaf.leafStarts.count
                let frozenBefore = byLeaf.storage.frozenLeafCount
                let removal = byLeaf.removeSubrange(range)
                let cut = try #require(removal)
                byRun.makeUnique()
                let reference = byRun.storage.removeLocallyRunByRun(range)
                #expect(cut == .remove(reference), "\(context): the cut's operation")
                local.append(cut)
                cuts += 1
                if byLeaf.leafStarts.count != leavesBefore || range.count > 1_024 { multiLeafCuts += 1 }
                if byLeaf.storage.frozenLeafCount < frozenBefore { cutsOfFrozenLeaves += 1 }
                let (a, b) = (Self.layout(of: byLeaf), Self.layout(of: byRun))
                #expect(a == b, "\(context): cut \(range)\none pass:\n\(a)\nrun by run:\n\(b)")
                if a != b { return }
                if cuts % 10 == 0 { byLeaf._checkInvariants() }
                #expect(byLeaf.encodedState() == byRun.encodedState(), "\(context)")
            }
            for operation in local { peer.integrate(operation) }
            if step % 100 == 0 {
                #expect(Self.layout(of: byLeaf) == Self.layout(of: byRun), "\(context)")
                #expect(byLeaf.elements == byRun.elements && byLeaf == byRun, "\(context)")
                byRun._checkInvariants()
            }
        }
        #expect(byLeaf.operations() == byRun.operations())
        #expect(cuts > 100 && multiLeafCuts > 10 && cutsOfFrozenLeaves >= 2 && compactions > 10,
                "cuts \(cuts), over several leaves \(multiLeafCuts), thawing frozen leaves \(cutsOfFrozenLeaves), compactions \(compactions)")
    }

    /// Cuts at every start and length around the runs of one fragmented leaf (runs of one
    /// element, of visible and removed elements, continuing each other or not), and across the
    /// leaves after it: the one-pass cut matches run by run for each.
    @Test func everyCutOfAFragmentedStretchMatchesRunByRun() throws {
        // Typing with every third keystroke undone leaves alternating visible and removed runs
        // of one insertion; a second replica's typing interleaves runs that continue nothing.
        func build() -> Array {
            var array = Self.makeArray(1)
            var peer = Self.makeArray(2)
            _ = array.insert(contentsOf: Swift.Array(repeating: "a" as Unicode.Scalar, count: 1_500), at: 0)
            for op in array.operations() { peer.integrate(op) }
            var random = SeededRandom(seed: 99)
            for i in 0..<300 {
                let at = 200 + (i * 7) % 900
                let op = array.insert("b", at: at)
                peer.integrate(op)
                if i % 3 == 0 { _ = array.removeSubrange(at..<(at + 1)) }
                if random.chance(0.2) {
                    let p = random.below(peer.count)
                    array.integrate(peer.insert("\n", at: p))
                }
            }
            return array
        }
        let template = build()
        var compared = 0
        for from in stride(from: 150, to: 1_300, by: 53) {
            for length in [2, 3, 5, 17, 64, 300, 900, 1_700] where from + length <= template.count {
                var byLeaf = build()
                var byRun = build()
                let removal = byLeaf.removeSubrange(from..<(from + length))
                let cut = try #require(removal)
                byRun.makeUnique()
                #expect(cut == .remove(byRun.storage.removeLocallyRunByRun(from..<(from + length))))
                #expect(Self.layout(of: byLeaf) == Self.layout(of: byRun), "cut \(from)..<\(from + length)")
                #expect(byLeaf.encodedState() == byRun.encodedState())
                byLeaf._checkInvariants()
                compared += 1
            }
        }
        #expect(compared > 100)
    }
}
