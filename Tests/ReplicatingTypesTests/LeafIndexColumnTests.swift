import Testing
@testable import ReplicatingTypes

/// The ID index's columns: the last chunk grows from 64 elements to a whole chunk, and every
/// counter keeps its leaf across the moves, whatever sizes the appends come in.
@Suite struct LeafIndexColumnTests {
    @Test(arguments: [1, 7, 63, 64, 65, 1000, 4095, 4096, 4097] as [Int])
    func countersKeepTheirLeavesAsChunksGrow(step: Int) {
        var column = LeafIndexColumn()
        var expected: [UInt32] = []
        var leaf: UInt32 = 0
        while expected.count < 3 * LeafIndexColumn.chunkSize + 100 {
            column.append(leaf, count: step)
            expected += Swift.Array(repeating: leaf, count: step)
            leaf += 1
            #expect(column.reservedBytes >= 4 * column.count)
        }
        // Reassigning a range that spans chunks.
        column.assign(9_999, to: 4_000..<4_200)
        for c in 4_000..<4_200 { expected[c] = 9_999 }
        #expect(column.count == expected.count)
        #expect((0..<column.count).allSatisfy { column[$0] == expected[$0] })
        column.deallocate()
    }

    @Test func aSmallDocumentTakesASmallIndex() {
        let text = ReplicatingText("let x = 1\n", replica: ReplicaID(1))
        #expect(text.scalars._storageStatistics.idIndexBytes <= 64 * 4)
    }
}
