import EditingTraces
import Testing
@testable import ReplicatingTypes

/// Random local edits go to a `ReplicatingArray` and to a plain Swift array; they must agree
/// after every step.
@Suite struct ReplicatingArrayOracleTests {
    @Test(arguments: testSeeds([1, 2, 3, 4, 5, 6, 7, 8]))
    func randomLocalEditsMatchPlainArray(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var array = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(7), paragraphBreak: { $0 == "\n" })
        var oracle: [Unicode.Scalar] = []
        for step in 0..<1500 {
            let roll = Int.random(in: 0..<10, using: &random)
            if roll < 6 || oracle.isEmpty {
                let at = Int.random(in: 0...oracle.count, using: &random)
                let text = (0..<Int.random(in: 1...4, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
                array.insert(contentsOf: text, at: at)
                oracle.insert(contentsOf: text, at: at)
            } else if roll < 9 {
                let at = Int.random(in: 0..<oracle.count, using: &random)
                let n = Int.random(in: 1...Swift.min(5, oracle.count - at), using: &random)
                array.removeSubrange(at..<(at + n))
                oracle.removeSubrange(at..<(at + n))
            } else {
                let at = Int.random(in: 0...oracle.count, using: &random)
                let n = Int.random(in: 0...Swift.min(3, oracle.count - at), using: &random)
                let text = (0..<Int.random(in: 0...3, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
                array.replaceSubrange(at..<(at + n), with: text)
                oracle.replaceSubrange(at..<(at + n), with: text)
            }
            #expect(array.count == oracle.count, "seed \(seed) step \(step)")
            if step % 50 == 0 || step == 1499 {
                #expect(array.elements == oracle, "seed \(seed) step \(step)")
                array._checkInvariants()
            }
        }
        #expect(array.elements == oracle)
        for i in stride(from: 0, to: oracle.count, by: 7) {
            #expect(array[i] == oracle[i])
            #expect(array.index(of: array.id(at: i)) == i)
        }
    }

    /// Reads between edits see each edit at once, wherever it landed: the count tree defers a
    /// leaf's count change until another leaf changes (so typing writes no branch), and every
    /// reader must add what is deferred.
    @Test(arguments: testSeeds([11, 12, 13]))
    func readsBetweenEditsSeeEachEdit(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        // 12,000 short paragraphs, hundreds to a leaf: two levels of branches above the leaves.
        let start = Array(String(repeating: "ab\n", count: 12_000).unicodeScalars)
        var array = ReplicatingArray(start, replica: ReplicaID(3), paragraphBreak: { $0 == "\n" })
        var oracle = start
        func paragraphStarts() -> [Int] { [0] + oracle.indices.filter { oracle[$0] == "\n" }.map { $0 + 1 } }
        for step in 0..<400 {
            // A burst of typing or deleting at one place, then reads anywhere.
            var at = Int.random(in: 0...oracle.count, using: &random)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                if Bool.random(using: &random) || at == oracle.count {
                    let scalar = testAlphabet.randomElement(using: &random)!
                    array.insert(scalar, at: at)
                    oracle.insert(scalar, at: at)
                    at += 1
                } else {
                    array.remove(at: at)
                    oracle.remove(at: at)
                }
            }
            #expect(array.count == oracle.count, "seed \(seed) step \(step)")
            let i = Int.random(in: 0..<oracle.count, using: &random)
            #expect(array[i] == oracle[i], "seed \(seed) step \(step)")
            #expect(array.index(of: array.id(at: i)) == i, "seed \(seed) step \(step)")
            let starts = paragraphStarts()
            #expect(array.paragraphCount == starts.count, "seed \(seed) step \(step)")
            let paragraph = Int.random(in: 0..<starts.count, using: &random)
            #expect(array.startOfParagraph(paragraph) == starts[paragraph], "seed \(seed) step \(step)")
            #expect(array.paragraph(containing: i) == starts.lastIndex { $0 <= i }, "seed \(seed) step \(step)")
        }
        array._checkInvariants()
        #expect(array.elements == oracle)
    }

    @Test func emptyArrayBehaves() {
        var array = ReplicatingArray<Int>(replica: ReplicaID(1))
        #expect(array.isEmpty && array.elements.isEmpty)
        #expect(array.removeSubrange(0..<0) == nil)
        #expect(array.insert(contentsOf: [Int](), at: 0) == nil)
        array.append(1)
        array.remove(at: 0)
        #expect(array.isEmpty)
        array._checkInvariants()
    }

    @Test func longParagraphAndManyParagraphsKeepLeafRules() {
        var array = ReplicatingArray<Unicode.Scalar>(replica: ReplicaID(1), paragraphBreak: { $0 == "\n" })
        let long = Array(String(repeating: "abcdefghij", count: 500).unicodeScalars)
        array.insert(contentsOf: long, at: 0)
        let lines = Array(String(repeating: "line\n", count: 3000).unicodeScalars)
        array.insert(contentsOf: lines, at: 2500)
        array._checkInvariants()
        var oracle = long
        oracle.insert(contentsOf: lines, at: 2500)
        #expect(array.elements == oracle)
        #expect(array.paragraphCount == 3001)
    }
}
