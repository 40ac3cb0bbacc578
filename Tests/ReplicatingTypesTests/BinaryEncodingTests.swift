import EditingTraces
import Foundation
import Testing
import ReplicatingTypes

@Suite struct BinaryEncodingTests {
    private func sampleText() -> ReplicatingText {
        var a = ReplicatingText("hello wörld 😀\nsecond line\n", replica: ReplicaID(1))
        var b = ReplicatingText(replica: ReplicaID(300))
        for op in a.operations() { b.apply(op) }
        a.replace(3..<5, with: [])
        b.replace(6..<6, with: Array("big ".unicodeScalars))
        for op in b.operations(since: a.versionVector) { a.apply(op) }
        return a
    }

    @Test func stateRoundTripsThroughBinary() throws {
        let text = sampleText()
        let bytes = text.encodedState()
        let decoded = try ReplicatingText(decodingState: bytes, replica: ReplicaID(1))
        #expect(decoded == text)
        #expect(decoded.string == text.string)
        #expect(decoded.lineCount == text.lineCount)
    }

    @Test func operationsRoundTripThroughBinary() throws {
        let ops = sampleText().operations()
        let decoded = try ReplicatingArrayCoding.decode(ReplicatingArrayCoding.encode(ops), as: Unicode.Scalar.self)
        #expect(decoded == ops)
    }

    @Test func aKeystrokeIsSmallOnTheWire() {
        var text = ReplicatingText("some existing text", replica: ReplicaID(0x1234_5678_9abc))
        let op = text.replace(4..<4, with: ["x"])
        let bytes = ReplicatingArrayCoding.encode(op)
        #expect(bytes.count <= 20, "a keystroke took \(bytes.count) bytes")
    }

    @Test func everyTruncationIsRejectedWithoutCrashing() {
        let bytes = sampleText().encodedState()
        for length in 0..<bytes.count {
            #expect(throws: BinaryDecodingError.self) {
                try ReplicatingText(decodingState: Array(bytes[..<length]), replica: ReplicaID(1))
            }
        }
    }

    @Test func corruptedBytesNeverCrash() {
        let bytes = sampleText().encodedState()
        var random = SeededRandom(seed: 61)
        var rejected = 0
        for _ in 0..<2000 {
            var corrupt = bytes
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                corrupt[Int.random(in: 0..<corrupt.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                let decoded = try ReplicatingText(decodingState: corrupt, replica: ReplicaID(1))
                decoded.scalars._checkInvariants()
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0)
    }

    @Test func wrongVersionIsNamed() {
        var bytes = sampleText().encodedState()
        bytes[0] = 9
        #expect(throws: BinaryDecodingError.unsupportedVersion(9)) {
            try ReplicatingText(decodingState: bytes, replica: ReplicaID(1))
        }
    }

    @Test func stateMissingAnAnchorIsRejected() {
        var a = ReplicatingText("ab", replica: ReplicaID(1))
        let second = a.replace(2..<2, with: ["c"])
        #expect(throws: BinaryDecodingError.self) {
            try ReplicatingText(decodingState: ReplicatingArrayCoding.encode(second), replica: ReplicaID(2))
        }
    }

    @Test func insertedElementsHoldOneInlineAndManyInAnArrayAlike() throws {
        let one = InsertedElements<Unicode.Scalar>(["a"]), many = InsertedElements<Unicode.Scalar>(Array("abc".unicodeScalars))
        #expect(one.count == 1 && one[0] == "a" && Array(many) == Array("abc".unicodeScalars))
        #expect(one == ["a"] && one != many && InsertedElements<Unicode.Scalar>([]).isEmpty)
        #expect(one.withContiguousElements { Array($0) } == ["a"] && many.withContiguousElements { $0.count } == 3)
        // The wire does not tell them apart: one element encodes as a run of one.
        let insertion = ReplicatingArrayInsertion<Unicode.Scalar>(id: ElementID(replica: ReplicaID(1), counter: 0), lamport: 1, anchor: nil, content: .elements(one))
        let decoded = try ReplicatingArrayCoding.decode(ReplicatingArrayCoding.encode([.insert(insertion)]), as: Unicode.Scalar.self)
        #expect(decoded == [.insert(insertion)])
        let json = try JSONEncoder().encode(InsertedElements([7]))
        #expect(String(decoding: json, as: UTF8.self) == "[7]")
        #expect(try JSONDecoder().decode(InsertedElements<Int>.self, from: json) == [7])
    }

    /// An operation that arrived before the element it follows waits in the copy. A copy's own
    /// saved state (a snapshot, an editor's view) keeps it waiting; a state from elsewhere that
    /// refers to elements it lacks is refused.
    @Test func anOperationWaitingForItsAnchorSurvivesOnlyInACopysOwnState() throws {
        var origin = ReplicatingText("ab\n", replica: ReplicaID(1))
        var copy = origin
        copy.replica = ReplicaID(2)
        let first = origin.replace(2..<2, with: Array("<Y1>".unicodeScalars))
        let second = origin.replace(6..<6, with: Array(" f(x)".unicodeScalars))
        for op in second { copy.integrate(op) }
        #expect(copy.scalars.pendingOperationCount == 1 && copy.string == "ab\n")
        let state = copy.encodedState()
        #expect(throws: BinaryDecodingError.self) { try ReplicatingText(decodingState: state, replica: ReplicaID(2)) }
        var restored = try ReplicatingText(decodingState: state, replica: ReplicaID(2), keepingWaitingOperations: true)
        #expect(restored.scalars.pendingOperationCount == 1 && restored.string == "ab\n")
        for op in first { restored.integrate(op) }
        #expect(restored.scalars.pendingOperationCount == 0 && restored.string == origin.string && origin.string == "ab<Y1> f(x)\n")
    }
}
