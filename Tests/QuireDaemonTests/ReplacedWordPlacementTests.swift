import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A token typed right before or right after a word that another editor replaces at the same
/// moment (Vim `g~~`, `ciw`, a block `c`) stays on its side of the new word, once and whole,
/// whichever edit reaches the daemon first and whichever replica wins the CRDT's tie-break
/// (protocol/decisions/edit-intent.md, rule 6).
@Suite struct ReplacedWordPlacementTests {
    /// One case: the shared line, where the typist types what, the replacer's range and text,
    /// and the line everyone must end with.
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var typedAt: Int
        var typed: String
        var replaced: Range<Int>
        var replacement: String
        var expected: String
        var testDescription: String { "\(typed) at \(typedAt) while \(replaced) becomes \(replacement)" }
    }

    static let cases: [Case] = [
        // Before the word (what used to land after the new word).
        Case(text: "go alpha beta\n", typedAt: 3, typed: "<A17> ", replaced: 3..<8, replacement: "ALPHA",
             expected: "go <A17> ALPHA beta\n"),
        Case(text: "let v = compute(a)\n", typedAt: 8, typed: "f(x) + ", replaced: 8..<15, replacement: "evaluate",
             expected: "let v = f(x) + evaluate(a)\n"),
        Case(text: "say hello world\n", typedAt: 4, typed: "\"s\" ", replaced: 4..<9, replacement: "goodbye",
             expected: "say \"s\" goodbye world\n"),
        // After the word (what already held, and must still).
        Case(text: "go alpha beta\n", typedAt: 8, typed: " <B21>", replaced: 3..<8, replacement: "ALPHA",
             expected: "go ALPHA <B21> beta\n"),
        Case(text: "let v = compute(a)\n", typedAt: 15, typed: "_all", replaced: 8..<15, replacement: "evaluate",
             expected: "let v = evaluate_all(a)\n"),
        // The whole line's case toggled (`g~~`): every word replaced, the token between two of them.
        Case(text: "go alpha beta\n", typedAt: 9, typed: "f(x) ", replaced: 0..<13, replacement: "GO ALPHA BETA",
             expected: "GO ALPHA f(x) BETA\n"),
    ]

    static let forms: [EditIntentTests.Form] = [.range, .linesWithCursor, .fullWithCursor]

    @Test(arguments: cases, forms)
    func aTokenTypedNextToAReplacedWordStaysOnItsSide(_ c: Case, replacerForm: EditIntentTests.Form) {
        for swapRoles in [false, true] {
            for replacerFirst in [false, true] {
                let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: c.text)
                let (typist, replacer) = swapRoles ? (second, first) : (first, second)
                typist.holdIncoming = true
                replacer.holdIncoming = true
                func replace() { EditIntentTests.type(replacer, c.replaced, c.replacement, as: replacerForm) }
                func typeToken() { EditIntentTests.type(typist, c.typedAt..<c.typedAt, c.typed, as: .linesWithCursor) }
                if replacerFirst { replace(); typeToken() } else { typeToken(); replace() }
                for _ in 0..<2 { typist.deliver(); replacer.deliver() }
                let text = daemon.documents["doc"]?.text.string ?? ""
                #expect(text == c.expected, "swapRoles \(swapRoles), replacer first \(replacerFirst): \(text.debugDescription)")
                #expect(typist.string == text && replacer.string == text, "the editors converge on the daemon's text")
                #expect(typist.hashMismatches == 0 && replacer.hashMismatches == 0)
            }
        }
    }

    /// The replacer undoes its replacement after the other typed on both sides of the new word:
    /// the old word comes back between the two tokens, and redo puts the new one back there.
    @Test(arguments: [false, true])
    func undoOfTheReplacementLeavesTheTokensOnTheirSides(swapRoles: Bool) {
        let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: "go alpha beta\n")
        let (typist, replacer) = swapRoles ? (second, first) : (first, second)
        typist.holdIncoming = true
        replacer.holdIncoming = true
        UndoTests.edit(replacer, 3..<8, "ALPHA", group: 1)
        EditIntentTests.type(typist, 8..<8, " <B21>", as: .linesWithCursor)
        EditIntentTests.type(typist, 3..<3, "<A17> ", as: .linesWithCursor)
        for _ in 0..<2 { typist.deliver(); replacer.deliver() }
        #expect(daemon.documents["doc"]?.text.string == "go <A17> ALPHA <B21> beta\n")
        #expect(UndoTests.undo(replacer) == true)
        for _ in 0..<2 { typist.deliver(); replacer.deliver() }
        #expect(daemon.documents["doc"]?.text.string == "go <A17> alpha <B21> beta\n")
        #expect(UndoTests.undo(replacer, "document/redo") == true)
        for _ in 0..<2 { typist.deliver(); replacer.deliver() }
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text == "go <A17> ALPHA <B21> beta\n")
        #expect(typist.string == text && replacer.string == text)
    }

    /// The replacer undoes while the other, who typed before the new word, goes on typing right
    /// there (the `:%s` then `u` of editors/test/commands.sh): the old word comes back whole
    /// after what is typed, never inside it, whichever comes first.
    @Test(arguments: [false, true])
    func undoWhileTheOtherTypesRightBeforeTheWord(swapRoles: Bool) {
        for undoFirst in [false, true] {
            let (daemon, first, second) = ConcurrentEditingTests.twoEditors(sharing: "go alpha beta\n")
            let (typist, replacer) = swapRoles ? (second, first) : (first, second)
            UndoTests.edit(replacer, 3..<8, "ALPHA", group: 1)
            EditIntentTests.type(typist, 3..<3, "<A17> f(e10", as: .linesWithCursor)
            for _ in 0..<2 { typist.deliver(); replacer.deliver() }
            #expect(daemon.documents["doc"]?.text.string == "go <A17> f(e10ALPHA beta\n")
            typist.holdIncoming = true
            replacer.holdIncoming = true
            func undo() { _ = replacer.request("document/undo", ["uri": "doc"]) }
            func typeOn() { EditIntentTests.type(typist, 14..<14, "0) ", as: .linesWithCursor) }
            if undoFirst { undo(); typeOn() } else { typeOn(); undo() }
            for _ in 0..<2 { typist.deliver(); replacer.deliver() }
            let text = daemon.documents["doc"]?.text.string ?? ""
            #expect(text == "go <A17> f(e100) alpha beta\n", "undo first \(undoFirst): \(text.debugDescription)")
            #expect(typist.string == text && replacer.string == text)
            #expect(UndoTests.undo(replacer, "document/redo") == true)
            for _ in 0..<2 { typist.deliver(); replacer.deliver() }
            #expect(daemon.documents["doc"]?.text.string == "go <A17> f(e100) ALPHA beta\n")
            #expect(typist.string == replacer.string)
        }
    }

    /// The same on two daemons over a peer link: the replacement on one, the token on the other,
    /// both made before either hears of the other; with each daemon's replicas lower in turn (the
    /// CRDT's tie-break), and the line move of rule 7 the same way.
    @Test(arguments: [(100, 200), (200, 100)] as [(UInt64, UInt64)])
    func acrossTwoDaemons(replacerBase: UInt64, typistBase: UInt64) throws {
        for c in [Self.cases[0], Self.cases[1], Self.cases[5]] {
            let net = PeerTestNetwork()
            let a = net.makeDaemon(replacerBase), b = net.makeDaemon(typistBase)
            let replacer = TestEditor(daemon: a), typist = TestEditor(daemon: b)
            replacer.initialize(user: "ann")
            typist.initialize(user: "bob")
            replacer.open("doc", text: c.text)
            typist.open("doc", text: "")
            try net.link(a, b)
            net.pump([a, b])
            typist.deliver()
            #expect(typist.string == c.text)
            EditIntentTests.type(replacer, c.replaced, c.replacement, as: .linesWithCursor)
            EditIntentTests.type(typist, c.typedAt..<c.typedAt, c.typed, as: .linesWithCursor)
            for _ in 0..<3 { net.pump([a, b]); replacer.deliver(); typist.deliver() }
            let text = a.documents["doc"]?.text.string ?? ""
            #expect(text == c.expected, "\(c.testDescription): \(text.debugDescription)")
            #expect(b.documents["doc"]?.text.string == text && replacer.string == text && typist.string == text, "all converge")
        }
        let moved = LineMovePlacementTests.cases[0]
        let net = PeerTestNetwork()
        let a = net.makeDaemon(replacerBase), b = net.makeDaemon(typistBase)
        let mover = TestEditor(daemon: a), typist = TestEditor(daemon: b)
        mover.initialize(user: "ann")
        typist.initialize(user: "bob")
        mover.open("doc", text: moved.text)
        typist.open("doc", text: "")
        try net.link(a, b)
        net.pump([a, b])
        typist.deliver()
        let change = LineMovePlacementTests.vimChange(from: moved.text, to: moved.moved)
        EditIntentTests.type(mover, change.range, change.text, as: .range)
        let lineEnd = moved.text.split(separator: "\n")[0].unicodeScalars.count
        EditIntentTests.type(typist, lineEnd..<lineEnd, moved.typed, as: .linesWithCursor)
        for _ in 0..<3 { net.pump([a, b]); mover.deliver(); typist.deliver() }
        let text = a.documents["doc"]?.text.string ?? ""
        #expect(text == moved.expected, "\(text.debugDescription)")
        #expect(b.documents["doc"]?.text.string == text && mover.string == text && typist.string == text, "all converge")
    }
}
