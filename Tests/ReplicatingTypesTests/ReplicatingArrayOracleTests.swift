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
