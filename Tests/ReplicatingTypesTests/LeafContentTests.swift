import EditingTraces
import Testing
@testable import ReplicatingTypes

/// A leaf's content: scalars stored one, two or four bytes each (the narrowest the leaf's
/// scalars allow, widened when a wider one arrives), other elements as they are; always the
/// same elements as a plain array would hold.
@Suite struct LeafContentTests {
    static let latin1: [Unicode.Scalar] = ["a", "\n", "\r", "é", "\u{FF}", " "]
    static let bmp: [Unicode.Scalar] = ["中", "\u{0301}", "\u{FFFF}", "Ā"]
    static let astral: [Unicode.Scalar] = ["😀", "𝄞", "\u{10FFFF}"]

    @Test(arguments: testSeeds([51, 52, 53]))
    func scalarsMatchAPlainArrayThroughEveryWidth(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var content = LeafContent<Unicode.Scalar>()
        var oracle: [Unicode.Scalar] = []
        for step in 0..<600 {
            // Wider scalars become likelier as the steps go on, so each width is held a while.
            let pool = step < 200 ? Self.latin1 : step < 400 ? Self.latin1 + Self.bmp : Self.latin1 + Self.bmp + Self.astral
            if random.chance(0.3), !oracle.isEmpty {
                let at = random.below(oracle.count)
                let end = min(oracle.count, at + 1 + random.below(6))
                content.removeSubrange(at..<end)
                oracle.removeSubrange(at..<end)
            } else {
                let at = random.below(oracle.count + 1)
                let typed = (0..<(1 + random.below(4))).map { _ in pool[random.below(pool.count)] }
                content.insert(contentsOf: typed, at: at)
                oracle.insert(contentsOf: typed, at: at)
            }
            #expect(Array(content) == oracle, "seed \(seed) step \(step)")
        }
        let widest = oracle.map(\.value).max() ?? 0
        #expect(content.width == (widest < 0x100 ? 1 : widest < 0x1_0000 ? 2 : 4))
        content.withUnsafeElements { #expect(Array($0) == oracle) }
    }

    @Test func widthFollowsTheWidestScalar() {
        var content = LeafContent<Unicode.Scalar>()
        content.append(contentsOf: Array("plain é\n".unicodeScalars))
        #expect(content.width == 1)
        #expect(content.reservedBytes < 4 * content.count)
        content.insert(contentsOf: ["中"], at: 2)
        #expect(content.width == 2)
        content.insert(contentsOf: ["😀"], at: 0)
        #expect(content.width == 4)
        #expect(Array(content) == Array("😀pl中ain é\n".unicodeScalars))
        // A suffix taken off is as narrow as its own scalars allow; the rest keeps its width.
        let suffix = content.removeSuffix(from: 4)
        #expect(suffix.width == 1 && Array(suffix) == Array("ain é\n".unicodeScalars))
        #expect(content.width == 4 && Array(content) == Array("😀pl中".unicodeScalars))
        // Appending content of another width widens to the wider of the two.
        var narrow = LeafContent<Unicode.Scalar>()
        narrow.append(contentsOf: Array("ab".unicodeScalars))
        narrow.append(contentsOf: content)
        #expect(narrow.width == 4 && Array(narrow) == Array("ab😀pl中".unicodeScalars))
        var wide = content
        wide.append(contentsOf: suffix)
        #expect(Array(wide) == Array("😀pl中ain é\n".unicodeScalars))
    }

    @Test func otherElementsAreStoredAsTheyAre() {
        var content = LeafContent<Int>()
        content.insert(contentsOf: [1, 2, 3], at: 0)
        content.insert(contentsOf: [Int.max, -7], at: 1)
        content.removeSubrange(0..<1)
        #expect(Array(content) == [Int.max, -7, 2, 3])
        #expect(content.width == MemoryLayout<Int>.stride)
        let suffix = content.removeSuffix(from: 2)
        #expect(Array(suffix) == [2, 3] && Array(content) == [Int.max, -7])
    }

    /// A text of Latin-1 scalars only is stored a byte per scalar, and its UTF-8 (written
    /// straight from those bytes) is the string's.
    @Test func latin1TextWritesItsUTF8() {
        let string = (0..<3_000).map { "ligne \($0): café, naïve, \u{FF}\u{A0}" }.joined(separator: "\n")
        let text = ReplicatingText(string, replica: ReplicaID(1))
        #expect(text.string == string)
        #expect(text.utf8Count == string.utf8.count)
        let stats = text.scalars._storageStatistics
        #expect(stats.contentBytes < text.count + text.count / 4)
    }
}
