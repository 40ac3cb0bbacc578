import Testing
@testable import ReplicatingTypes

/// `InsertedElements` holds one small plain element inline as its bits and anything else in an
/// array; both must read back exactly what went in.
@Suite struct InsertedElementsTests {
    @Test func oneScalarReadsBackInlineOrNot() {
        for scalar in ["a", "\n", "é", "😀", "\u{10FFFF}", "\u{0}"] as [Unicode.Scalar] {
            let one = InsertedElements(CollectionOfOne(scalar))
            #expect(one.count == 1 && one[0] == scalar && Array(one) == [scalar])
            #expect(one.withContiguousElements { Array($0) } == [scalar])
            #expect(one == InsertedElements([scalar]))
        }
    }

    @Test func otherShapesUseTheArray() {
        let ints = InsertedElements([Int.max])  // eight bytes: not inline
        #expect(Array(ints) == [Int.max])
        let strings = InsertedElements(["a", "bc"])  // references: never inline
        #expect(Array(strings) == ["a", "bc"] && strings.withContiguousElements { $0.count } == 2)
        let bytes = InsertedElements([UInt8(7)])
        #expect(bytes[0] == 7)
        let many = InsertedElements(Array("paste".unicodeScalars))
        #expect(String(String.UnicodeScalarView(many)) == "paste")
        #expect(InsertedElements<Unicode.Scalar>([]).isEmpty)
    }

    @Test func aKeystrokeOperationStaysSixtyFourBytes() {
        // Every local edit returns one; a replay keeps hundreds of thousands of them.
        #expect(MemoryLayout<ReplicatingArrayOperation<Unicode.Scalar>>.stride == 64)
    }
}
