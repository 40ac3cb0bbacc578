import EditingTraces
import Testing
import ReplicatingTypes

/// A text made from a string is built leaf by leaf in one pass (`fillFresh`); a copy that
/// integrates the same insertion builds it the general way (one leaf, then split piece by piece
/// from its end). Both must hold the same elements, encode the same, and go on the same way.
@Suite struct FreshTextTests {
    /// Texts of every shape: no break, only breaks, a final break or none, CRLF, astral scalars,
    /// and texts past one leaf's capacity (cut into pieces), one paragraph exactly at it.
    static let shapes: [String] = {
        let leaf = 1_024   // a leaf's capacity (`ReplicatingArrayStorage.maxContentPerLeaf`)
        return [
            "x", "\n", "\n\n\n", "abc", "abc\n", "abc\ndef", "a\r\nb\r\n", "😀中\né\u{301}\n\n𝄞",
            String(repeating: "y", count: leaf - 1) + "\n" + String(repeating: "z", count: leaf),
            String(repeating: "w", count: leaf + 1),
            String(repeating: "long line ", count: 500) + "\nshort\n" + String(repeating: "q", count: 3 * leaf + 7),
            (0..<2_000).map { "line \($0) of code { }" }.joined(separator: "\n") + "\n",
        ]
    }()

    @Test(arguments: shapes)
    func aTextFromAStringEqualsTheSameInsertionIntegrated(_ string: String) throws {
        let fresh = ReplicatingText(string, replica: ReplicaID(1))
        fresh.scalars._checkInvariants()
        #expect(fresh.string == string)
        #expect(fresh.lineCount == string.unicodeScalars.filter { $0 == "\n" }.count + 1)
        let operations = fresh.operations()
        #expect(operations.count == 1)
        var integrated = ReplicatingText(replica: ReplicaID(2))
        for op in operations { integrated.integrate(op) }
        integrated.scalars._checkInvariants()
        #expect(integrated.string == string)
        #expect(fresh.encodedState() == integrated.encodedState())
        #expect(fresh.operations() == integrated.operations())
        // Every element is where the general build put it: same ID at every offset.
        for offset in stride(from: 0, to: fresh.count, by: max(1, fresh.count / 200)) {
            #expect(fresh.scalars.id(at: offset) == integrated.scalars.id(at: offset))
        }
        // A state decoded from it is the same document.
        let decoded = try ReplicatingText(decodingState: fresh.encodedState(), replica: ReplicaID(3))
        #expect(decoded.string == string)
    }

    @Test(arguments: testSeeds([1, 2, 3, 4]))
    func editsAfterAFreshBuildConvergeWithTheGeneralBuild(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var source = (0..<300).map { "row \($0): " + String(repeating: "ab", count: Int(random.below(40))) }.joined(separator: "\n")
        source += String(repeating: "k", count: 2_500)
        var fresh = ReplicatingText(source, replica: ReplicaID(1))
        var integrated = ReplicatingText(replica: ReplicaID(2))
        for op in fresh.operations() { integrated.integrate(op) }
        for step in 0..<400 {
            // Both copies edit; each takes the other's operations.
            let editor = step % 3 == 0
            var copy = editor ? integrated : fresh
            var made: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            if copy.count > 0 && random.below(3) == 0 {
                let start = random.below(copy.count)
                made = copy.replace(start..<min(copy.count, start + 1 + random.below(30)), with: [])
            } else {
                let at = random.below(copy.count + 1)
                let typed = (0..<(1 + random.below(5))).map { _ in testAlphabet[random.below(testAlphabet.count)] }
                made = copy.replace(at..<at, with: typed)
            }
            if editor {
                integrated = copy
                for op in made { fresh.integrate(op) }
            } else {
                fresh = copy
                for op in made { integrated.integrate(op) }
            }
        }
        fresh.scalars._checkInvariants()
        integrated.scalars._checkInvariants()
        #expect(fresh.string == integrated.string)
        #expect(fresh.encodedState() == integrated.encodedState())
    }

    @Test func anEmptyStringMakesAnEmptyText() {
        let text = ReplicatingText("", replica: ReplicaID(1))
        #expect(text.count == 0 && text.lineCount == 1 && text.string == "")
        #expect(text.operations().isEmpty)
        text.scalars._checkInvariants()
    }

    @Test func theWholeTextAsUTF8MatchesTheString() {
        for string in Self.shapes {
            let text = ReplicatingText(string, replica: ReplicaID(1))
            #expect(text.utf8Count == string.utf8.count)
            #expect(text.string.utf8.elementsEqual(string.utf8))
        }
    }
}
