import EditingTraces
import Testing
import ReplicatingTypes

@Suite struct TextDiffTests {
    @Test(arguments: [
        ("", ""), ("", "abc"), ("abc", ""), ("abc", "abc"), ("abc", "abxc"), ("a\nb\nc\n", "a\nc\n"),
        ("one\ntwo\nthree", "one\n2\nthree\nfour"), ("x😀y\r\n", "x😃y\r\n"), ("kitten", "sitting"),
    ])
    func editsReproduceTheNewText(old: String, new: String) {
        let oldScalars = Array(old.unicodeScalars)
        let edits = TextDiff.edits(from: old, to: new)
        #expect(TextDiff.apply(edits, to: oldScalars).string == new)
        // Sorted and disjoint.
        for (x, y) in zip(edits, edits.dropFirst()) { #expect(x.range.upperBound <= y.range.lowerBound) }
    }

    /// A new empty line is the break typed at the end of the line above (before its old break),
    /// so what is typed on it next follows that break (edit-intent.md, rule 8).
    @Test func anOpenedLineIsTheBreakAtTheEndOfTheLineAbove() {
        #expect(TextDiff.edits(from: "ab\ncd\n", to: "ab\n\ncd\n") == [TextEdit(range: 2..<2, replacement: ["\n"])])
        #expect(TextDiff.edits(from: "ab\n", to: "ab\n\n") == [TextEdit(range: 2..<2, replacement: ["\n"])])
        #expect(TextDiff.edits(from: "ab", to: "\nab") == [TextEdit(range: 0..<0, replacement: ["\n"])], "nothing above: stays")
    }

    /// Myers' shortest script splits `f(b71) ` typed before `f(f26)` into `b71) ` and `(f` around
    /// the `f` of `f(f26)`; joined across that letter (rule 1) it would re-type `f26` and hand
    /// `f(` to the new token. One insertion explains it, and leaves `f(f26)` untouched.
    @Test func aTokenTypedBeforeAnotherIsOneInsertionThatLeavesTheOtherAlone() {
        let old = "middle {f24} f(f26) <G30> {f29} f(f21) [s0] f(f31) {b4} {s0}\n"
        let new = "middle {f24} f(b71) f(f26) <G30> {f29} f(f21) [s0] f(f31) [b73] {s0}\n"
        let edits = TextDiff.edits(from: old, to: new)
        #expect(TextDiff.apply(edits, to: Array(old.unicodeScalars)).string == new)
        #expect(edits.first == TextEdit(range: 13..<13, replacement: Array("f(b71) ".unicodeScalars)))
        #expect(edits.dropFirst().map(\.range) == [51..<55], "{b4} -> [b73] is the only other edit")
    }

    /// The same for removals: deleting a token in front of a like one removes that token alone.
    @Test func aTokenDeletedBeforeAnotherIsOneRemovalThatLeavesTheOtherAlone() {
        let old = "middle {f24} f(b71) f(f26) <G30> {f29} f(f21) [s0] f(f31) [b73] {s0}\n"
        let new = "middle {f24} f(f26) <G30> {f29} f(f21) [s0] f(f31) {b4} {s0}\n"
        let edits = TextDiff.edits(from: old, to: new)
        #expect(TextDiff.apply(edits, to: Array(old.unicodeScalars)).string == new)
        let removed = edits.first.map { String(String.UnicodeScalarView(Array(old.unicodeScalars)[$0.range])) }
        #expect(edits.first?.replacement == [] && (removed == "f(b71) " || removed == " f(b71)"), "removed \(removed ?? "nothing")")
    }

    @Test func oneTypedCharacterIsOneInsertion() {
        let edits = TextDiff.edits(from: "hello world\nsecond\n", to: "hello, world\nsecond\n")
        #expect(edits == [TextEdit(range: 5..<5, replacement: [","])])
    }

    @Test func aReplacedWordIsReplacedWhole() {
        // kitten -> sitting: a minimal script keeps "itt" and "n", and a concurrent removal of
        // "kitten" would then leave "sig". The word is one replacement instead.
        // The period next to it goes with it: the token is `kitten.` (rule 5).
        #expect(TextDiff.edits(from: "a kitten.", to: "a sitting.") == [TextEdit(range: 2..<9, replacement: Array("sitting.".unicodeScalars))])
    }

    /// Rule 5: a replaced word takes the punctuation of its token when it is the token's only
    /// word, so code-like tokens are replaced whole; in a token with other words the
    /// punctuation stays, since others' typing is anchored to it.
    @Test func aReplacedTokenTakesItsPunctuation() {
        #expect(TextDiff.edits(from: "x <A1> y", to: "x <B1> y") == [TextEdit(range: 2..<6, replacement: Array("<B1>".unicodeScalars))])
        #expect(TextDiff.edits(from: "say \"s\" twice", to: "say \"t\" twice") == [TextEdit(range: 4..<7, replacement: Array("\"t\"".unicodeScalars))])
        #expect(TextDiff.edits(from: "call f(x) now", to: "call f(y) now") == [TextEdit(range: 7..<8, replacement: ["y"])])
        #expect(TextDiff.edits(from: "self.foo.bar(x)", to: "self.foo.baz(x)") == [TextEdit(range: 9..<12, replacement: Array("baz".unicodeScalars))])
        // Typing stays character-precise: nothing is taken in.
        #expect(TextDiff.edits(from: "f(x)", to: "f(xy)") == [TextEdit(range: 3..<3, replacement: ["y"])])
    }

    @Test func typingAndDeletingStayCharacterPrecise() {
        #expect(TextDiff.edits(from: "helo world", to: "hello world").map(\.replacement) == [["l"]])
        let deletion = TextDiff.edits(from: "hello world", to: "hell world")
        #expect(deletion.count == 1 && deletion[0].range.count == 1 && deletion[0].replacement.isEmpty)
    }

    @Test(arguments: [41, 42, 43, 44] as [UInt64])
    func randomTextsRoundTrip(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for _ in 0..<50 {
            let old = (0..<Int.random(in: 0...60, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! }
            var new = old
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let at = Int.random(in: 0...new.count, using: &random)
                let n = Int.random(in: 0...Swift.min(4, new.count - at), using: &random)
                new.replaceSubrange(at..<(at + n), with: (0..<Int.random(in: 0...4, using: &random)).map { _ in testAlphabet.randomElement(using: &random)! })
            }
            #expect(TextDiff.apply(TextDiff.edits(from: old, to: new), to: old) == new, "seed \(seed)")
        }
    }

    @Test func largeDocumentWithOneChangedLine() {
        let line = Array("the quick brown fox jumps over the lazy dog, again and again and again\n".unicodeScalars)
        var old: [Unicode.Scalar] = []
        for _ in 0..<40_000 { old.append(contentsOf: line) }
        var new = old
        new.insert("!", at: old.count / 2 + 7)
        let edits = TextDiff.edits(from: old, to: new)
        #expect(edits.count == 1)
        #expect(edits.first?.replacement == ["!"])
    }
}
