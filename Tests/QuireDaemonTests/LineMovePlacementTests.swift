import Testing
@testable import QuireDaemon
@testable import ReplicatingTypes
import QuireTestSupport

/// A line move (`:m 0`, `:m $`, `ddp`, `:g/^/m 0`) or a `:sort` that Vim sends as one range
/// trimmed to the characters that differ, cut mid-line, while someone types in a line: what was
/// typed in a line that stayed put stays in that line, once and whole, whichever edit reaches
/// the daemon first and whichever replica wins the CRDT's tie-break; what was typed in a moved
/// line is there once and whole (protocol/decisions/edit-intent.md, rule 7).
@Suite struct LineMovePlacementTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var moved: String
        /// The line the partner types at the end of (0-based, in `text`), and what.
        var typedInLine: Int
        var typed: String
        /// The text everyone must end with; nil: the token was typed in a moved line, so only
        /// "once and whole, every line there" is asked.
        var expected: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: ":m 0, typed in the first line", text: "    row 1 a\n    row 2 b\n    row 3 c\n",
             moved: "    row 3 c\n    row 1 a\n    row 2 b\n", typedInLine: 0, typed: " <A17>",
             expected: "    row 3 c\n    row 1 a <A17>\n    row 2 b\n"),
        Case(name: ":m 0, typed in the second line", text: "    row 1 a\n    row 2 b\n    row 3 c\nend\n",
             moved: "    row 3 c\n    row 1 a\n    row 2 b\nend\n", typedInLine: 1, typed: " f(x)",
             expected: "    row 3 c\n    row 1 a\n    row 2 b f(x)\nend\n"),
        Case(name: ":m $, typed in a line that stayed", text: "  x = 1;\n  y = 2;\n  z = 3;\n",
             moved: "  y = 2;\n  z = 3;\n  x = 1;\n", typedInLine: 2, typed: " // \"s\"",
             expected: "  y = 2;\n  z = 3; // \"s\"\n  x = 1;\n"),
        Case(name: "ddp, typed in the line that stayed", text: "top\n  dp1 one;\n  dp2 two;\nend\n",
             moved: "top\n  dp2 two;\n  dp1 one;\nend\n", typedInLine: 2, typed: " <B5>",
             expected: "top\n  dp2 two; <B5>\n  dp1 one;\nend\n"),
        Case(name: ":sort, typed in the middle line", text: "top\nsrt-c\nsrt-b\nsrt-a\nend\n",
             moved: "top\nsrt-a\nsrt-b\nsrt-c\nend\n", typedInLine: 2, typed: " <E12>",
             expected: "top\nsrt-a\nsrt-b <E12>\nsrt-c\nend\n"),
        Case(name: ":g/^/m 0, typed in the middle line", text: "row 1;\nrow 2;\nrow 3;\nrow 4;\nrow 5;\n",
             moved: "row 5;\nrow 4;\nrow 3;\nrow 2;\nrow 1;\n", typedInLine: 2, typed: " f(y)",
             expected: "row 5;\nrow 4;\nrow 3; f(y)\nrow 2;\nrow 1;\n"),
        Case(name: ":m 0, typed in the moved line", text: "    row 1 a\n    row 2 b\n    row 3 c\nend\n",
             moved: "    row 3 c\n    row 1 a\n    row 2 b\nend\n", typedInLine: 2, typed: " <C9>", expected: nil),
    ]

    /// What Vim's client sends for `old` -> `new` (editors/vim `HunkChange`): the changed lines,
    /// trimmed to the characters that differ (a replacement taking in whole words), or whole lines
    /// with their breaks when nothing is kept at either end. Offsets are in scalars.
    static func vimChange(from old: String, to new: String) -> (range: Range<Int>, text: String) {
        let oldLines = old.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
        let newLines = new.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
        var a = 0, oldEnd = oldLines.count, newEnd = newLines.count
        while a < oldEnd, a < newEnd, oldLines[a] == newLines[a] { a += 1 }
        while oldEnd > a, newEnd > a, oldLines[oldEnd - 1] == newLines[newEnd - 1] { oldEnd -= 1; newEnd -= 1 }
        let oldFirst = oldLines[a], newFirst = newLines[a], oldLast = oldLines[oldEnd - 1], newLast = newLines[newEnd - 1]
        var p = 0
        while p < oldFirst.count, p < newFirst.count, oldFirst[p] == newFirst[p] { p += 1 }
        var q = 0
        while q < oldLast.count, q < newLast.count, oldLast[oldLast.count - 1 - q] == newLast[newLast.count - 1 - q] { q += 1 }
        let isWord = EditAlignment.isWord
        if p < oldFirst.count, isWord(oldFirst[p]) { while p > 0, isWord(oldFirst[p - 1]) { p -= 1 } }
        if q < oldLast.count, isWord(oldLast[oldLast.count - 1 - q]) { while q > 0, isWord(oldLast[oldLast.count - q]) { q -= 1 } }
        func offset(line: Int, character: Int) -> Int { oldLines[..<line].reduce(0) { $0 + $1.count + 1 } + character }
        let joined = newLines[a..<newEnd].map { String(String.UnicodeScalarView($0)) }.joined(separator: "\n")
        if p == 0 && q == 0 {
            return (offset(line: a, character: 0)..<offset(line: oldEnd, character: 0), joined + "\n")
        }
        let text = Array(joined.unicodeScalars)
        return (offset(line: a, character: p)..<offset(line: oldEnd - 1, character: oldLast.count - q),
                String(String.UnicodeScalarView(text[p..<(text.count - q)])))
    }

    /// The helper above cuts a move mid-line, as Vim does (the case this suite is about).
    @Test func vimCutsALineMoveMidLine() {
        let change = Self.vimChange(from: "    row 1 a\n    row 2 b\n    row 3 c\n", to: "    row 3 c\n    row 1 a\n    row 2 b\n")
        #expect(change.range == 8..<35 && change.text == "3 c\n    row 1 a\n    row 2 b")
    }

    @Test(arguments: cases)
    func aTokenTypedInALineThatStaysStaysInIt(_ c: Case) {
        for swapRoles in [false, true] {
            for moverFirst in [false, true] {
                let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: c.text)
                let (typist, mover) = swapRoles ? (second, first) : (first, second)
                typist.holdIncoming = true
                mover.holdIncoming = true
                let lineEnd = c.text.split(separator: "\n", omittingEmptySubsequences: false)[...c.typedInLine]
                    .reduce(0) { $0 + $1.unicodeScalars.count + 1 } - 1
                let change = Self.vimChange(from: c.text, to: c.moved)
                func move() { EditIntentTests.type(mover, change.range, change.text, as: .range) }
                func typeToken() { EditIntentTests.type(typist, lineEnd..<lineEnd, c.typed, as: .linesWithCursor) }
                if moverFirst { move(); typeToken() } else { typeToken(); move() }
                for _ in 0..<2 { typist.deliver(); mover.deliver() }
                let text = daemon.documents["doc"]?.text.string ?? ""
                let context = "swapRoles \(swapRoles), mover first \(moverFirst): \(text.debugDescription)"
                if let expected = c.expected {
                    #expect(text == expected, "\(context)")
                } else {
                    #expect(text.components(separatedBy: c.typed).count == 2, "the token once and whole: \(context)")
                    let lines = text.replacingOccurrences(of: c.typed, with: "").split(separator: "\n").map(String.init)
                    #expect(lines == c.moved.split(separator: "\n").map(String.init), "every line once, in the new order: \(context)")
                }
                #expect(typist.string == text && mover.string == text, "the editors converge on the daemon's text")
                #expect(typist.hashMismatches == 0 && mover.hashMismatches == 0)
            }
        }
    }

    /// Among equally short line scripts, the line that stands where it stood is kept.
    @Test func theLineLevelDiffKeepsALineThatDidNotMove() {
        let old = [3, 2, 1], new = [1, 2, 3]
        let hunks = MyersDiff.hunksKeepingInPlace(old[...], new[...])
        #expect(hunks == [MyersDiff.Hunk(old: 0..<1, new: 0..<1), MyersDiff.Hunk(old: 2..<3, new: 2..<3)])
        // Where keeping it would cost more, the shortest script wins: `k` stays only if cheaper.
        let longer = Array("abkcd"), moved = Array("cdkab")
        let script = MyersDiff.hunksKeepingInPlace(longer[...], moved[...])
        #expect(script.reduce(0) { $0 + $1.old.count + $1.new.count } == MyersDiff.hunks(longer[...], moved[...]).reduce(0) { $0 + $1.old.count + $1.new.count })
    }
}
