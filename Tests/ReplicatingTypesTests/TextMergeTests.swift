import EditingTraces
import Testing
import ReplicatingTypes

/// The three-way merge used when an editor reopens after losing its daemon.
@Suite struct TextMergeTests {
    static func merge(base: String, current: String, incoming: String) -> String {
        let edits = TextMerge.edits(base: Array(base.unicodeScalars), current: Array(current.unicodeScalars),
                                    incoming: Array(incoming.unicodeScalars))
        return String(String.UnicodeScalarView(TextDiff.apply(edits, to: Array(current.unicodeScalars))))
    }

    @Test func onlyTheEditorChanged() {
        #expect(Self.merge(base: "one\ntwo\n", current: "one\ntwo\n", incoming: "one\n2\nthree\n") == "one\n2\nthree\n")
    }

    @Test func onlyTheDaemonChanged() {
        #expect(Self.merge(base: "one\ntwo\n", current: "zero\none\ntwo\n", incoming: "one\ntwo\n") == "zero\none\ntwo\n")
    }

    @Test func changesInDifferentPlacesBothLand() {
        #expect(Self.merge(base: "alpha\nbeta\ngamma\n", current: "ALPHA\nbeta\ngamma\n", incoming: "alpha\nbeta\ngamma!\ndelta\n")
                == "ALPHA\nbeta\ngamma!\ndelta\n")
    }

    @Test func insertsAtTheSamePointKeepTheDaemonsFirst() {
        #expect(Self.merge(base: "hello", current: "hello world", incoming: "hello!") == "hello world!")
    }

    @Test func bothChangingOneStretchKeepsBoth() {
        #expect(Self.merge(base: "a cat sat", current: "a dog sat", incoming: "a cow sat") == "a dogcow sat", "each word whole")
        #expect(Self.merge(base: "abc", current: "aXc", incoming: "ac") == "aXc", "a removal of what the daemon changed is dropped")
    }

    @Test func theEditorRemovingWhatTheDaemonKeptRemovesIt() {
        #expect(Self.merge(base: "one two three", current: "zero one two three", incoming: "one three") == "zero one three")
    }

    /// Random concurrent changes: every word either side inserted survives whole, and every
    /// word the daemon's side has is still there.
    @Test(arguments: 0..<200 as Range<UInt64>)
    func nothingTypedOnEitherSideIsLost(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let base = (0..<Int.random(in: 0...40, using: &random)).map { _ in ["a", "b", "\n", "é"].randomElement(using: &random) ?? "a" }
        /// Base with some characters removed and marked words inserted between the rest.
        func typed(_ marker: String) -> (String, [String]) {
            var tokens = base
            for _ in 0..<Int.random(in: 0...2, using: &random) where !tokens.isEmpty {
                let start = Int.random(in: 0..<tokens.count, using: &random)
                tokens.removeSubrange(start..<min(start + Int.random(in: 1...3, using: &random), tokens.count))
            }
            var words: [String] = []
            for k in 0..<Int.random(in: 1...4, using: &random) {
                let word = "<\(marker)\(k)>"
                tokens.insert(word, at: Int.random(in: 0...tokens.count, using: &random))
                words.append(word)
            }
            return (tokens.joined(), words)
        }
        let (current, daemonWords) = typed("D")
        let (incoming, editorWords) = typed("E")
        let merged = Self.merge(base: base.joined(), current: current, incoming: incoming)
        for word in daemonWords + editorWords {
            #expect(merged.contains(word), "seed \(seed): \(word) lost in \(merged.debugDescription) (base \(base.joined().debugDescription), daemon \(current.debugDescription), editor \(incoming.debugDescription))")
        }
    }

    /// Any three texts, however unrelated (a `current` that does not even descend from `base`):
    /// the edits are sorted, disjoint and inside `current`.
    @Test(arguments: 0..<300 as Range<UInt64>)
    func editsAreAlwaysValidForCurrent(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func randomText(_ from: [Unicode.Scalar]) -> [Unicode.Scalar] {
            var text = from
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                let at = Int.random(in: 0...text.count, using: &random)
                if Bool.random(using: &random), at < text.count {
                    text.removeSubrange(at..<min(text.count, at + Int.random(in: 1...5, using: &random)))
                } else {
                    text.insert(contentsOf: (0..<Int.random(in: 1...4, using: &random)).map { _ in testAlphabet.randomElement(using: &random) ?? "a" }, at: at)
                }
            }
            return text
        }
        let base = randomText([])
        let current = Bool.random(using: &random) ? randomText(base) : randomText([])
        let incoming = randomText(base)
        let edits = TextMerge.edits(base: base, current: current, incoming: incoming)
        var end = 0
        for edit in edits {
            #expect(edit.range.lowerBound >= end && edit.range.upperBound <= current.count, "seed \(seed): \(edits) for \(current.count)")
            end = edit.range.upperBound
        }
    }
}

/// The text merge (the fallback when a reopen has no view) keeps tokens whole.
@Suite struct TextMergeTokenTests {
    static func merged(base: String, current: String, incoming: String) -> String {
        var text = Array(current.unicodeScalars)
        for edit in TextMerge.edits(base: Array(base.unicodeScalars), current: text, incoming: Array(incoming.unicodeScalars)).reversed() {
            text.replaceSubrange(edit.range, with: edit.replacement)
        }
        return String(String.UnicodeScalarView(text))
    }

    /// An offline deletion of `<A16>eers` removes that stretch, not `A16>eers<` (which reads the
    /// same), so an insertion made meanwhile right after it cannot land inside `<A67>`.
    @Test func aRemovalCutsNoTokenInTwo() {
        let edits = TextDiff.edits(from: "p<A16>eers<A67>", to: "p<A67>")
        #expect(edits == [TextEdit(range: 1..<10, replacement: [])])
        #expect(Self.merged(base: "p<A16>eers<A67>", current: "p<A16>eers f(y)<A67>", incoming: "p<A67>") == "p f(y)<A67>")
    }

    /// Two replacements of one token, one on each side, keep both whole.
    @Test func concurrentReplacementsOfOneTokenKeepBoth() {
        let text = Self.merged(base: "x <A1> y", current: "x <C1> y", incoming: "x <B1> y")
        #expect(text == "x <C1><B1> y", "\(text.debugDescription)")
        // Inside a call the brackets stay (others' typing is anchored to them): both arguments
        // are kept, side by side.
        #expect(Self.merged(base: "call f(x) now", current: "call f(y) now", incoming: "call f(z) now") == "call f(yz) now")
    }
}
