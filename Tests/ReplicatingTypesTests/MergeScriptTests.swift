import Testing
import ReplicatingTypes

/// Hand-written merge scripts for the cases that break naive sequence CRDTs.
@Suite struct MergeScriptTests {
    private func pair(_ text: String) -> (ReplicatingText, ReplicatingText) {
        let a = ReplicatingText(text, replica: ReplicaID(1))
        var b = ReplicatingText(replica: ReplicaID(2))
        for op in a.operations() { b.apply(op) }
        return (a, b)
    }

    private func exchange(_ a: inout ReplicatingText, _ aOps: [ReplicatingArrayOperation<Unicode.Scalar>],
                          _ b: inout ReplicatingText, _ bOps: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        for op in aOps { b.apply(op) }
        for op in bOps { a.apply(op) }
        #expect(a == b)
        #expect(a.string == b.string)
    }

    @Test func concurrentInsertsAtSameAnchor() {
        var (a, b) = pair("abcd")
        var aOps: [ReplicatingArrayOperation<Unicode.Scalar>] = [], bOps = aOps
        // Both type three characters, one at a time, at position 2.
        for (i, c) in "XYZ".unicodeScalars.enumerated() { aOps += a.replace((2 + i)..<(2 + i), with: [c]) }
        for (i, c) in "123".unicodeScalars.enumerated() { bOps += b.replace((2 + i)..<(2 + i), with: [c]) }
        exchange(&a, aOps, &b, bOps)
        // Never interleaved character by character.
        #expect(a.string == "abXYZ123cd" || a.string == "ab123XYZcd")
    }

    @Test func insertAfterConcurrentlyDeletedElement() {
        var (a, b) = pair("abcd")
        let aOps = a.replace(2..<3, with: [])
        let bOps = b.replace(3..<3, with: Array("X".unicodeScalars))
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "abXd")
    }

    @Test func splitParagraphWhileOtherPeerTypesInIt() {
        var (a, b) = pair("hello world\nnext\n")
        // A presses Enter after "hello"; B types at the end of the same line.
        let aOps = a.replace(5..<5, with: ["\n"])
        var bOps: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for (i, c) in "!!!".unicodeScalars.enumerated() { bOps += b.replace((11 + i)..<(11 + i), with: [c]) }
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "hello\n world!!!\nnext\n")
        #expect(a.line(1) == " world!!!")
    }

    @Test func twoReplicasJoinTheSameTwoLines() {
        var (a, b) = pair("one\ntwo\nthree")
        let aOps = a.replace(3..<4, with: [])
        let bOps = b.replace(3..<4, with: [])
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "onetwo\nthree")
        #expect(a.lineCount == 2)
    }

    @Test func joinWhileOtherTypesOnTheSecondLine() {
        var (a, b) = pair("one\ntwo")
        let aOps = a.replace(3..<4, with: [])
        let bOps = b.replace(7..<7, with: Array("!".unicodeScalars))
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "onetwo!")
    }

    @Test func bothDeleteTheSameRange() {
        var (a, b) = pair("abcdef")
        let aOps = a.replace(1..<4, with: [])
        let bOps = b.replace(2..<5, with: [])
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "af")
    }

    @Test func concurrentEditsOfTheSameLineKeepBoth() {
        var (a, b) = pair("the cat sat\n")
        let aOps = a.replaceLines(0..<1, with: "the black cat sat")
        let bOps = b.replaceLines(0..<1, with: "the cat sat down")
        exchange(&a, aOps, &b, bOps)
        #expect(a.string == "the black cat sat down\n")
    }
}
