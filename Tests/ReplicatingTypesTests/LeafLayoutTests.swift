import EditingTraces
import Testing
@testable import ReplicatingTypes

/// The leaf layout: a leaf holds many paragraphs (line breaks anywhere in it), typing a line
/// break splits nothing, paragraphs are found by break counts and a scan of one leaf, and the
/// leaves a deletion leaves small are merged with a neighbour.
@Suite struct LeafLayoutTests {
    /// Lines typed one scalar at a time, line breaks included, fill leaves up to their capacity:
    /// a leaf per thousand scalars or so, not one per line.
    @Test func typedLinesShareLeaves() {
        var text = ReplicatingText(replica: ReplicaID(1))
        var oracle: [Unicode.Scalar] = []
        for line in 0..<400 {
            for scalar in "let v\(line) = f(\(line))\n".unicodeScalars {
                text.replace(text.count..<text.count, with: [scalar])
                oracle.append(scalar)
            }
        }
        text.scalars._checkInvariants()
        #expect(Array(text.scalars.elements) == oracle)
        #expect(text.lineCount == 401)
        let leaves = text.scalars._storageStatistics.leaves
        #expect(leaves <= oracle.count / 256 + 1, "\(leaves) leaves for \(oracle.count) scalars")
        #expect(text.line(123) == "let v123 = f(123)")
        #expect(text.line(400) == "")
    }

    /// Every paragraph query against an oracle while random edits (line breaks, CRLF, astral
    /// scalars, deletions across leaves) go on in a text of many multi-line leaves, on a local
    /// copy and on a copy that applies the operations as remote ones.
    @Test(arguments: testSeeds([31, 32, 33]))
    func paragraphQueriesMatchAnOracle(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let start = (0..<1_500).map { "row \($0)" + String(repeating: "x", count: $0 % 23) }.joined(separator: "\n")
        var local = ReplicatingText(start, replica: ReplicaID(1))
        var remote = ReplicatingText(replica: ReplicaID(2))
        for op in local.operations() { remote.integrate(op) }
        var oracle = Array(start.unicodeScalars)
        for step in 0..<300 {
            var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            if random.chance(0.35), !oracle.isEmpty {
                let at = random.below(oracle.count)
                let end = min(oracle.count, at + 1 + random.below(random.chance(0.2) ? 3_000 : 40))
                operations = local.replace(at..<end, with: [])
                oracle.removeSubrange(at..<end)
            } else {
                let at = random.below(oracle.count + 1)
                let typed = (0..<(1 + random.below(random.chance(0.1) ? 2_000 : 8))).map { _ in testAlphabet[random.below(testAlphabet.count)] }
                operations = local.replace(at..<at, with: typed)
                oracle.insert(contentsOf: typed, at: at)
            }
            for op in operations { _ = remote.apply(op) }
            let starts = [0] + oracle.indices.filter { oracle[$0] == "\n" }.map { $0 + 1 }
            for copy in [local, remote] {
                #expect(copy.lineCount == starts.count, "seed \(seed) step \(step)")
                for _ in 0..<5 {
                    let line = random.below(starts.count)
                    let end = line + 1 < starts.count ? starts[line + 1] - 1 : oracle.count
                    #expect(copy.scalars.rangeOfParagraph(line) == starts[line]..<end, "seed \(seed) step \(step)")
                    let offset = random.below(oracle.count + 1)
                    let expected = starts.lastIndex { $0 <= offset }!
                    #expect(copy.scalars.paragraph(containing: offset) == expected, "seed \(seed) step \(step)")
                    #expect(copy.position(ofOffset: offset, in: .utf16).line == expected, "seed \(seed) step \(step)")
                }
            }
        }
        local.scalars._checkInvariants()
        remote.scalars._checkInvariants()
        #expect(local.scalars.elements == oracle)
        #expect(remote == local)
    }

    /// Deleting most of a large text, in pieces of every size, locally and on a remote copy:
    /// the leaves left small are merged away, so what remains costs a few leaves, not one per
    /// piece of the deleted region.
    @Test(arguments: testSeeds([41, 42]))
    func deletedRegionsDoNotKeepALeafEach(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let start = (0..<6_000).map { "line \($0) of some code" }.joined(separator: "\n")
        var local = ReplicatingText(start, replica: ReplicaID(1))
        var remote = ReplicatingText(replica: ReplicaID(2))
        for op in local.operations() { remote.integrate(op) }
        let leavesBefore = local.scalars._storageStatistics.leaves
        #expect(leavesBefore >= 100)
        // Typing scattered over the text first, so the region holds runs of two kinds.
        for _ in 0..<300 {
            let at = random.below(local.count + 1)
            for op in local.replace(at..<at, with: Array("ab".unicodeScalars)) { remote.integrate(op) }
        }
        // Delete all but the first and last 1,000 scalars, from the middle out, in random pieces.
        while local.count > 2_000 {
            let at = 1_000 + random.below(local.count - 2_000)
            let end = min(local.count - 1_000, at + 1 + random.below(random.chance(0.5) ? 50 : 2_000))
            for op in local.replace(at..<end, with: []) { remote.integrate(op) }
        }
        for copy in [local, remote] {
            copy.scalars._checkInvariants()
            #expect(copy.count == 2_000)
            let leaves = copy.scalars._storageStatistics.leaves
            #expect(leaves * 4 < leavesBefore, "seed \(seed): \(leaves) leaves left of \(leavesBefore)")
        }
        #expect(remote == local)
        // Typing into what is left reuses the freed leaf numbers and keeps every invariant.
        for _ in 0..<200 {
            let at = random.below(local.count + 1)
            for op in local.replace(at..<at, with: Array("new line\n".unicodeScalars)) { remote.integrate(op) }
        }
        local.scalars._checkInvariants()
        remote.scalars._checkInvariants()
        #expect(remote == local)
        #expect(remote.string == local.string)
    }
}
