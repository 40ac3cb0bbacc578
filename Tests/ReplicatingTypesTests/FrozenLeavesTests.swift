import EditingTraces
import Testing
@testable import ReplicatingTypes

/// Leaves frozen by a compaction (`FrozenRuns`): reading never thaws them, an edit or a remote
/// operation thaws only the leaf it changes, and the encoding gives back every run exactly.
@Suite struct FrozenLeavesTests {
    typealias Storage = ReplicatingArrayStorage<Unicode.Scalar>

    /// Code typed line by line with typos fixed at once: once its tombstones are dropped, each
    /// typo leaves a gap in the counters, and the document has several leaves to freeze.
    static func typedWithTypos(lines: Int = 400, replica: UInt64 = 1) -> ReplicatingText {
        var random = SeededRandom(seed: 7)
        var text = ReplicatingText(replica: ReplicaID(replica))
        for line in 0..<lines {
            for scalar in "let value\(line) = compute(\(line))\n".unicodeScalars {
                if random.chance(0.04) {
                    text.replace(text.count..<text.count, with: ["#"])
                    text.replace((text.count - 1)..<text.count, with: [])
                }
                text.replace(text.count..<text.count, with: [scalar])
            }
        }
        return text
    }

    @Test func readingACompactedDocumentThawsNothing() throws {
        var text = Self.typedWithTypos()
        let indexes = text.scalars.visibleIDs.flatMap { range in (0..<range.count).map { ElementID(replica: range.start.replica, counter: range.start.counter + $0) } }
        let expected = text.string
        #expect(text.dropTombstones() > 0)
        let storage = text.scalars.storage
        let leaves = text.scalars.leafStarts.count
        #expect(leaves > 3)
        #expect(storage.frozenLeafCount == leaves - 1, "every leaf but the first frozen")
        #expect(!storage.isFrozen(Storage.firstLeaf))
        text.scalars._checkInvariants()

        #expect(text.string == expected)
        for (i, id) in indexes.enumerated() {
            #expect(text.scalars.index(of: id) == i)
            #expect(text.scalars.id(at: i) == id)
            #expect(text.scalars.index(after: id) == i + 1)
            // One replica typed it all: consecutive visible counters are adjacent, and a gap in
            // the counters is a dropped typo between them.
            if i > 0 { #expect(text.scalars.isDirectlyAfter(id, indexes[i - 1]) == (id.counter == indexes[i - 1].counter + 1), "\(i)") }
        }
        #expect(text.scalars.tombstoneCount == 0)
        #expect(text.scalars.visibleIDs.reduce(0) { $0 + Int($1.count) } == expected.unicodeScalars.count)
        let state = text.encodedState()
        #expect(storage.thawedCount == 0 && storage.frozenLeafCount == leaves - 1, "reading thawed a leaf")

        // The state decodes to the same document, frozen again.
        let decoded = try ReplicatingText(decodingState: state, replica: ReplicaID(1))
        #expect(decoded == text)
        #expect(decoded.scalars.storage.frozenLeafCount > 0)
        decoded.scalars._checkInvariants()
    }

    @Test func anEditThawsOnlyTheLeafItChanges() {
        var text = Self.typedWithTypos()
        var peer = ReplicatingText(replica: ReplicaID(2))
        for op in text.operations() { peer.integrate(op) }
        text.dropTombstones()
        peer.dropTombstones()
        let frozen = text.scalars.storage.frozenLeafCount

        // Typing in the middle: one leaf thawed, however many keystrokes.
        let middle = text.count / 2
        var ops: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for k in 0..<20 { ops += text.replace((middle + k)..<(middle + k), with: ["x"]) }
        #expect(text.scalars.storage.thawedCount == 1)
        #expect(text.scalars.storage.frozenLeafCount == frozen - 1)
        text.scalars._checkInvariants()

        // The peer receives them: it thaws the one leaf they land in.
        for op in ops { peer.integrate(op) }
        #expect(peer.scalars.storage.thawedCount == 1)
        #expect(peer == text)
        peer.scalars._checkInvariants()

        // A removal from the peer in a leaf far from the first (full leaves: none merges): one
        // more leaf thawed here.
        let quarter = peer.count / 4
        for op in peer.replace(quarter..<(quarter + 3), with: []) { text.integrate(op) }
        #expect(text.scalars.storage.thawedCount == 2)
        #expect(peer == text)
        text.scalars._checkInvariants()
    }

    @Test func aRemovalNamingOnlyDroppedElementsThawsNothing() {
        var text = ReplicatingText(replica: ReplicaID(1))
        var removals: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        // Long lines, each with a word typed and removed in the middle.
        for line in 0..<300 {
            text.replace(text.count..<text.count, with: Array("line \(line) of some length ".unicodeScalars))
            let at = text.count
            text.replace(at..<at, with: Array("mistake".unicodeScalars))
            removals += text.replace(at..<(at + 7), with: [])
            text.replace(text.count..<text.count, with: Array("and the rest\n".unicodeScalars))
        }
        let expected = text.string
        text.dropTombstones()
        #expect(text.scalars.storage.frozenLeafCount > 0)
        // Removals arriving again (from a peer that had not seen them): they name only dropped
        // elements, so they change nothing and thaw nothing.
        for op in removals { text.integrate(op) }
        #expect(text.string == expected)
        #expect(text.scalars.storage.thawedCount == 0)
        text.scalars._checkInvariants()
    }

    /// Runs of every kind (tombstones, anchors of each form, other replicas, counters and
    /// Lamport counters far apart and near the top of their range) decode exactly.
    @Test(arguments: testSeeds([11, 12, 13]))
    func frozenRunsDecodeToTheSameRuns(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<50 {
            var runs = ContiguousArray<Storage.Run>()
            for _ in 0..<(1 + random.below(64)) {
                let big = random.chance(0.2)
                let counter = big ? UInt64.max - UInt64(random.below(1 << 20)) - (1 << 32) : UInt64(random.below(10_000))
                let lamport = random.chance(0.3) ? counter : UInt64(random.below(1 << 30)) &* (big ? 1 << 30 : 1)
                let replica = UInt16(random.below(4))
                let anchor: (UInt16, UInt64)
                switch random.below(4) {
                case 0: anchor = (Storage.noReplica, random.chance(0.8) ? 0 : UInt64(random.below(100)))
                case 1: anchor = (replica, counter &- 1)
                case 2: anchor = (runs.last?.replica ?? 0, (runs.last?.end ?? 1) &- 1)
                default: anchor = (UInt16(random.below(5)), UInt64(random.below(1 << 40)))
                }
                runs.append(Storage.Run(counter: counter, lamport: lamport, anchorCounter: anchor.1, replica: replica,
                                        anchorReplica: anchor.0, length: UInt32(1 + random.below(random.chance(0.1) ? 1 << 30 : 100)),
                                        isDeleted: random.chance(0.3)))
            }
            let frozen = FrozenRuns<Unicode.Scalar>(runs)
            let thawed = frozen.thawed()
            #expect(thawed.count == runs.count)
            for (a, b) in zip(runs, thawed) {
                #expect(a.counter == b.counter && a.lamport == b.lamport && a.replica == b.replica && a.length == b.length
                        && a.isDeleted == b.isDeleted && a.anchorReplica == b.anchorReplica && a.anchorCounter == b.anchorCounter, "seed \(seed)")
            }
            for (i, run) in runs.enumerated() where random.chance(0.2) {
                let found = frozen.runHolding(replica: run.replica, counter: run.counter)
                let expected = runs.firstIndex { $0.replica == run.replica && $0.counter <= run.counter && run.counter < $0.end }
                #expect(found?.index == expected, "seed \(seed) run \(i)")
            }
        }
    }

    /// After the drop, a typed document's runs take a few bytes each, not 32, and its ID index
    /// about one entry per leaf and replica rather than one per dropped gap.
    @Test func aCompactedDocumentIsSmall() {
        var text = Self.typedWithTypos(lines: 1_000)
        let before = text.scalars._storageStatistics
        text.dropTombstones()
        let after = text.scalars._storageStatistics
        #expect(after.frozenRuns > 0)
        #expect(after.frozenRunBytes <= 6 * after.frozenRuns, "\(after)")
        #expect(after.idIndexEntries <= 2 * after.leaves, "\(after)")
        #expect(after.totalBytes * 4 < before.totalBytes, "\(before) -> \(after)")
        #expect(Double(after.totalBytes) / Double(text.count) < 2.0, "\(after)")
    }
}
