import EditingTraces
import Testing
@testable import ReplicatingTypes

/// The ID index's columns, held as runs of counters in one leaf: every counter keeps its leaf
/// whatever the appends and reassignments, entries stay ordered and coalesced, and text opened or
/// typed in one go costs one entry per leaf, not one number per character.
@Suite struct LeafIndexColumnTests {
    /// Checks `column` against the plain array `expected`, counter by counter and run by run.
    static func expectSame(_ column: LeafIndexColumn, _ expected: [UInt32], sourceLocation: SourceLocation = #_sourceLocation) {
        column.checkInvariants()
        #expect(column.count == expected.count, sourceLocation: sourceLocation)
        #expect((0..<column.count).allSatisfy { column[$0] == expected[$0] }, sourceLocation: sourceLocation)
        // The runs cover the counters in order, and no two neighbours inside a chunk share a leaf.
        var next = 0
        for run in column.runs {
            #expect(run.counter == next && run.length > 0, sourceLocation: sourceLocation)
            next += run.length
        }
        #expect(next == expected.count, sourceLocation: sourceLocation)
    }

    @Test(arguments: [1, 7, 63, 64, 65, 1000, 4095, 4096, 4097] as [Int])
    func countersKeepTheirLeavesAsChunksGrow(step: Int) {
        var column = LeafIndexColumn()
        var expected: [UInt32] = []
        var leaf: UInt32 = 0
        while expected.count < 3 * LeafIndexColumn.chunkSize + 100 {
            column.append(leaf, count: step)
            expected += Swift.Array(repeating: leaf, count: step)
            leaf += 1
        }
        // Reassigning a range that spans chunks.
        column.assign(9_999, to: 4_000..<4_200)
        for c in 4_000..<4_200 { expected[c] = 9_999 }
        Self.expectSame(column, expected)
        column.deallocate()
    }

    @Test func appendsToOneLeafAreOneEntryPerChunk() {
        var column = LeafIndexColumn()
        for _ in 0..<10_000 { column.append(3, count: 1) }
        #expect(column.runs.map(\.leaf) == [3, 3, 3])
        #expect(column.runs.map(\.length) == [4096, 4096, 1808])
        // Giving a middle range its own leaf and then back merges the entries again.
        column.assign(8, to: 100..<200)
        #expect(column.runs.count == 5)
        column.assign(3, to: 100..<200)
        #expect(column.runs.count == 3)
        #expect(column.reservedBytes < 200)
        column.deallocate()
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomAppendsAssignmentsAndReplacementsMatchAPlainArray(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var column = LeafIndexColumn()
        var expected: [UInt32] = []
        for step in 0..<600 {
            let leaf = UInt32.random(in: 0..<6, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let n = random.chance(0.1) ? Int.random(in: 1...9_000, using: &random) : Int.random(in: 1...40, using: &random)
                column.append(leaf, count: n)
                expected += Swift.Array(repeating: leaf, count: n)
            case 4..<8 where !expected.isEmpty:
                let low = Int.random(in: 0..<expected.count, using: &random)
                let high = Swift.min(expected.count, low + (random.chance(0.2) ? Int.random(in: 1...9_000, using: &random) : Int.random(in: 1...50, using: &random)))
                column.assign(leaf, to: low..<high)
                for c in low..<high { expected[c] = leaf }
            case 8 where !expected.isEmpty:
                let low = Int.random(in: 0..<expected.count, using: &random)
                let high = Swift.min(expected.count, low + Int.random(in: 1...5_000, using: &random))
                #expect(column.allEqual(leaf, in: low..<high) == expected[low..<high].allSatisfy { $0 == leaf })
                column.assign(leaf, to: low..<high)
                for c in low..<high { expected[c] = leaf }
                #expect(column.allEqual(leaf, in: low..<high))
            default:
                let new = UInt32.random(in: 0..<6, using: &random)
                column.replace(leaf, with: new)
                for c in expected.indices where expected[c] == leaf { expected[c] = new }
            }
            if step % 50 == 0 { Self.expectSame(column, expected) }
        }
        Self.expectSame(column, expected)
        column.deallocate()
    }

    @Test func aChunkWhoseCountersAlternateLeavesHoldsEveryEntry() {
        var column = LeafIndexColumn()
        var expected: [UInt32] = []
        for c in 0..<(LeafIndexColumn.chunkSize + 10) {
            column.append(UInt32(c % 2), count: 1)
            expected.append(UInt32(c % 2))
        }
        #expect(column.runs.count == expected.count)
        Self.expectSame(column, expected)
        // One assignment over the whole chunk folds it back into one entry.
        column.assign(7, to: 0..<LeafIndexColumn.chunkSize)
        for c in 0..<LeafIndexColumn.chunkSize { expected[c] = 7 }
        #expect(column.runs.count == 11)
        Self.expectSame(column, expected)
        column.deallocate()
    }

    @Test func aSmallDocumentTakesASmallIndex() {
        let text = ReplicatingText("let x = 1\n", replica: ReplicaID(1))
        #expect(text.scalars._storageStatistics.idIndexBytes <= 64 * 4)
    }

    /// Code opened in one go: one index entry per leaf (leaves hold many lines), a small fraction
    /// of a byte per character instead of four.
    @Test func freshCodeCostsOneEntryPerLeaf() {
        let lines = (0..<5_000).map { "    let value\($0) = compute(\($0), \"é😀\") // 𝄞 note\r" }
        let text = ReplicatingText(lines.joined(separator: "\n") + "\n\n\n", replica: ReplicaID(1))
        #expect(text.scalars._checkInvariants() >= 0)
        let storage = text.scalars.storage
        let entries = storage.idIndex[0].runs
        let leaves = Set(entries.map(\.leaf))
        #expect(entries.count <= leaves.count + storage.idIndex[0].count / LeafIndexColumn.chunkSize + 1)
        #expect(leaves.count == text.scalars._storageStatistics.leaves)
        #expect(leaves.count <= text.count / 512 + 1)
        #expect(text.lineCount == 5_003)
        let perCharacter = Double(text.scalars._storageStatistics.idIndexBytes) / Double(text.count)
        #expect(perCharacter < 0.1)
    }

    /// Runs of typed text split by concurrent inserts and removals, with non-ASCII and astral
    /// characters, CRLF and empty paragraphs: the index still finds every element's leaf (checked
    /// counter by counter), remote operations find their anchors, and the states survive encoding.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func runsSplitByConcurrentEditsKeepTheirIndex(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var a = ReplicatingText("fn main() {\r\n\n    print(\"héllo 😀\")\r\n}\n\n", replica: ReplicaID(1))
        var b = ReplicatingText(replica: ReplicaID(2))
        for op in a.operations() { b.integrate(op) }
        for _ in 0..<40 {
            var opsA: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            var opsB: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            for side in 0..<2 {
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    var doc = side == 0 ? a : b
                    let count = doc.count
                    let at = Int.random(in: 0...count, using: &random)
                    let end = random.chance(0.4) ? Swift.min(count, at + Int.random(in: 0...8, using: &random)) : at
                    let typed = random.chance(0.8) ? (0..<Int.random(in: 1...12, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! } : []
                    let made = doc.replace(at..<end, with: typed)
                    if side == 0 { a = doc; opsA += made } else { b = doc; opsB += made }
                }
            }
            for op in opsB { a.integrate(op) }
            for op in opsA { b.integrate(op) }
            #expect(a.scalars._checkInvariants() >= 0)
            #expect(b.scalars._checkInvariants() >= 0)
            #expect(a.string == b.string)
        }
        let decoded = try ReplicatingText(decodingState: a.encodedState(), replica: ReplicaID(3))
        #expect(decoded.scalars._checkInvariants() >= 0)
        #expect(decoded.string == a.string)
        // Dropping every tombstone: the index follows the repacked leaves.
        _ = a.dropTombstones()
        #expect(a.scalars._checkInvariants() >= 0)
        #expect(a.string == b.string)
    }

    /// A large region typed, removed and its tombstones dropped: the dropped counters take at
    /// most one entry per chunk (a chunk of nothing else: "compacted"; else they read as the
    /// neighbouring entry's leaf, which does not hold them), so the index no longer grows with
    /// history no one can reach, and each still reads as known but compacted.
    @Test func droppedTombstonesTakeOneEntryPerChunk() {
        var text = ReplicatingText(replica: ReplicaID(1))
        for line in 0..<2_000 { _ = text.replace(text.count..<text.count, with: Swift.Array("    call(\(line)) // é😀\r\n".unicodeScalars)) }
        let typed = text.count
        _ = text.replace(10..<(typed - 10), with: [])
        _ = text.dropTombstones()
        #expect(text.scalars._checkInvariants() >= 0)
        #expect(text.count == 20)
        let column = text.scalars.storage.idIndex[0]
        #expect(column.count == typed)
        #expect(column.runs.count <= typed / LeafIndexColumn.chunkSize + 3)
        let compacted = (0..<typed).filter { text.scalars.isCompacted(ElementID(replica: ReplicaID(1), counter: UInt64($0))) }
        #expect(compacted.count == typed - 20)
        #expect(compacted.allSatisfy { (10..<(typed - 10)).contains($0) })
        #expect(text.scalars._storageStatistics.idIndexBytes < 1_024)
        #expect(text.scalars._storageStatistics.leaves == 1)
    }
}
