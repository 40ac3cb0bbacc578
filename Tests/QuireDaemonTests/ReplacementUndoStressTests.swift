import EditingTraces
import Foundation
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A reviewer's random attack on rule 6 (a replacement hangs from its first removed character)
/// and on undo/redo of replaced stretches: four editors on two daemons, two of them replacing
/// words, runs of words and stretches across lines (rule 7) and undoing and redoing in chains,
/// two typing tokens (`<17>`) anywhere, inside words too, and replacing words without undo; all
/// with held deliveries so that every edit races others. Replacements touch only letters, spaces
/// and line breaks, so no one ever removes a token: at the end every copy is equal, every editor
/// shows its daemon's text, and every token typed is there exactly once and whole. Stability
/// rounds drop tombstones on the way (the first removed characters replacements hang from).
@Suite struct ReplacementUndoStressTests {
    final class Run {
        var random: SeededRandom
        let net = PeerTestNetwork()
        let a: Daemon, b: Daemon
        var editors: [TestEditor] = []
        var tokens: [String] = []
        var group = 1
        var trace: [String] = []

        init(seed: UInt64) throws {
            random = SeededRandom(seed: seed)
            a = net.makeDaemon(300 + seed * 7)
            b = net.makeDaemon(900 + seed * 11)
            let ann = TestEditor(daemon: a), dan = TestEditor(daemon: b), cat = TestEditor(daemon: a), bob = TestEditor(daemon: b)
            for (editor, name) in [(ann, "ann"), (dan, "dan"), (cat, "cat"), (bob, "bob")] { editor.initialize(user: name) }
            ann.open("doc", text: "go alpha beta gamma\ndelta epsilon zeta\neta theta iota kappa\nmu nu xi omicron 😀 pi\n")
            dan.open("doc", text: "")
            try net.link(a, b)
            net.pump([a, b])
            cat.open("doc", text: "")
            bob.open("doc", text: "")
            editors = [ann, dan, cat, bob]
            for editor in editors { editor.deliver(); editor.holdIncoming = true }
        }

        /// A run of the editor's text made of letters (and, when `wide`, spaces and line breaks).
        func stretch(in editor: TestEditor, wide: Bool) -> Range<Int>? {
            let text = editor.text
            func fits(_ s: Unicode.Scalar) -> Bool {
                (s.properties.isAlphabetic && s.isASCII) || (wide && (s == " " || s == "\n"))
            }
            let starts = text.indices.filter { fits(text[$0]) && ($0 == 0 || !fits(text[$0 - 1]) || Int.random(in: 0..<4, using: &random) == 0) }
            guard let start = starts.randomElement(using: &random) else { return nil }
            var end = start
            while end < text.count, fits(text[end]), end - start < 30 { end += 1 }
            guard end - start >= 2 else { return nil }
            return start..<Int.random(in: (start + 2)...end, using: &random)
        }

        func insideToken(_ at: Int, _ text: [Unicode.Scalar]) -> Bool {
            var k = at - 1
            while k >= 0, text[k].properties.numericType != nil { k -= 1 }
            return k >= 0 && text[k] == "<" && k < at
        }

        func replacement(for old: [Unicode.Scalar], wide: Bool) -> String {
            let word = String(String.UnicodeScalarView(old))
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return word.uppercased() == word ? word.lowercased() : word.uppercased()
            case 1: return "w" + String(repeating: "q", count: Int.random(in: 0..<4, using: &random))
            case 2 where wide: return "one two\nthree"
            default: return word.capitalized + "x"
            }
        }

        func step() {
            let who = Int.random(in: 0..<editors.count, using: &random)
            let editor = editors[who]
            let undoes = who < 2
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                let wide = Int.random(in: 0..<3, using: &random) == 0
                guard let range = stretch(in: editor, wide: wide) else { return }
                let text = replacement(for: Array(editor.text[range]), wide: wide)
                trace.append("\(who) replaces \(range) \(String(String.UnicodeScalarView(editor.text[range])).debugDescription) by \(text.debugDescription)")
                group += 1
                UndoTests.edit(editor, range, text, group: group)
            case 3 where !undoes:
                // Anywhere but inside a token already there (that would cut it, as anyone may).
                let at = Int.random(in: 0...editor.text.count, using: &random)
                guard !insideToken(at, editor.text) else { return }
                let token = "<\(tokens.count)>"
                tokens.append(token)
                trace.append("\(who) types \(token) at \(at)")
                let form: EditIntentTests.Form = [.range, .linesWithCursor, .fullWithCursor].randomElement(using: &random) ?? .range
                _ = EditIntentTests.type(editor, at..<at, token, as: form)
            case 3..<5 where undoes:
                trace.append("\(who) undoes")
                _ = UndoTests.undo(editor)
            case 5 where undoes:
                trace.append("\(who) redoes")
                _ = UndoTests.undo(editor, "document/redo")
            case 6..<8:
                net.pump([a, b])
            case 8 where Int.random(in: 0..<3, using: &random) == 0:
                // A stability round: tombstones every copy has seen removed are dropped, the
                // first removed characters new text hangs from among them (undo keeps its own).
                let daemon = Bool.random(using: &random) ? a : b
                if let document = daemon.document("doc") {
                    trace.append("stability round on \(daemon === a ? "a" : "b")")
                    _ = daemon.startStabilityRound(document)
                }
            default:
                editor.deliver()
            }
        }

        func settle() {
            for _ in 0..<4 {
                net.pump([a, b])
                for editor in editors { editor.deliver() }
            }
        }
    }

    /// QUIRE_STRESS_SEEDS=1-200 runs those seeds instead, QUIRE_STRESS_STEPS=N that many steps each.
    static let seeds: [UInt64] = {
        guard let range = ProcessInfo.processInfo.environment["QUIRE_STRESS_SEEDS"]?.split(separator: "-").compactMap({ UInt64($0) }),
              let low = range.first, let high = range.last, low <= high else { return Array(1...12) }
        return Array(low...high)
    }()

    @Test(arguments: Self.seeds)
    func tokensSurviveReplacementsAndUndoChainsOnTwoDaemons(seed: UInt64) throws {
        let run = try Run(seed: seed)
        for _ in 0..<(Int(ProcessInfo.processInfo.environment["QUIRE_STRESS_STEPS"] ?? "") ?? 160) { run.step() }
        run.settle()
        let text = run.a.documents["doc"]?.text.string ?? ""
        let failures = [
            run.b.documents["doc"]?.text.string == text ? nil : "the daemons differ: \((run.b.documents["doc"]?.text.string ?? "").debugDescription)",
            run.editors.allSatisfy({ $0.hashMismatches == 0 }) ? nil : "a hash mismatch",
        ] + run.editors.enumerated().map { k, editor in
            let daemon = k % 2 == 0 ? run.a : run.b
            return editor.string == daemon.documents["doc"]?.text.string ? nil : "editor \(k) shows \(editor.string.debugDescription)"
        } + run.tokens.map { token in
            let count = text.components(separatedBy: token).count - 1
            return count == 1 ? nil : "\(token) is there \(count) times"
        }
        let found = failures.compactMap { $0 }
        #expect(found.isEmpty, "seed \(seed): \(found)\n\(text.debugDescription)\n\(run.trace.joined(separator: "\n"))")
    }

    /// Undo after stability rounds dropped the tombstones the replacement hangs from on the
    /// other daemon, and after the other replaced the new word in turn: the old word comes back
    /// next to the other's word (both kept, nothing lost), in the same place on every copy, and
    /// redo takes it out again.
    @Test(arguments: [(100, 200), (200, 100)] as [(UInt64, UInt64)])
    func undoAfterTheAnchorWasDroppedElsewhere(annBase: UInt64, bobBase: UInt64) throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(annBase), b = net.makeDaemon(bobBase)
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "go alpha beta\n")
        bob.open("doc", text: "")
        try net.link(a, b)
        func settle() { for _ in 0..<3 { net.pump([a, b]); ann.deliver(); bob.deliver() } }
        settle()
        UndoTests.edit(ann, 3..<8, "ALPHA", group: 1)
        settle()
        EditIntentTests.type(bob, 8..<8, " <B21>", as: .linesWithCursor)
        EditIntentTests.type(bob, 3..<3, "<A17> ", as: .linesWithCursor)
        settle()
        // Cat replaces ann's ALPHA and leaves: nothing on B keeps ALPHA's tombstones for an undo.
        let cat = TestEditor(daemon: b)
        cat.initialize(user: "cat")
        cat.open("doc", text: "")
        UndoTests.edit(cat, 9..<14, "omega", group: 1)
        #expect(cat.request("document/close", ["uri": "doc"])["result"] != nil)
        settle()
        #expect(a.documents["doc"]?.text.string == "go <A17> omega <B21> beta\n")
        // Each types once more, based on everything: their views have caught up, so a round may
        // drop what they no longer show.
        for editor in [ann, bob] {
            editor.edit(editor.text.count..<editor.text.count, with: ".")
            settle()
        }
        for daemon in [b, a] {
            #expect(daemon.startStabilityRound(try #require(daemon.document("doc"))))
            settle()
        }
        for daemon in [a, b] {
            #expect(try #require(daemon.documents["doc"]).text.scalars.compactedCount >= 5, "ALPHA's tombstones were dropped")
        }
        #expect(UndoTests.undo(ann) == true, "ann's dot")
        #expect(UndoTests.undo(ann) == true, "ann's replacement")
        settle()
        let undone = a.documents["doc"]?.text.string ?? ""
        #expect(undone == "go <A17> alphaomega <B21> beta\n.", "\(undone.debugDescription)")
        #expect(b.documents["doc"]?.text.string == undone && ann.string == undone && bob.string == undone)
        #expect(UndoTests.undo(ann, "document/redo") == true)
        settle()
        #expect(a.documents["doc"]?.text.string == "go <A17> omega <B21> beta\n.")
        #expect(b.documents["doc"]?.text.string == a.documents["doc"]?.text.string && ann.string == bob.string)
    }

    /// Undo of replaced words sends each word back as one change and removes its replacement as
    /// one: the restored stretch no longer lands between the replacement's first character and
    /// the rest (which cut every removal in two: 3 changes a line for a `:%s` and its undo, not 2).
    /// A word replaced twice in one undo block comes back once.
    @Test func undoOfReplacedWordsIsTwoChangesAWord() {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "go alpha beta\nsay alpha now\n")
        UndoTests.edit(ann, 3..<8, "ALPHA", group: 1)
        UndoTests.edit(ann, 18..<23, "ALPHA", group: 2)
        _ = ann.request("document/undo", ["uri": "doc"])
        ann.collect()
        let changes = ann.inbox.filter(\.isNotification).flatMap { $0["params"]?["changes"]?.arrayValue ?? [] }
        #expect(changes.count == 2, "\(changes)")
        ann.deliver()
        #expect(daemon.documents["doc"]?.text.string == "go ALPHA beta\nsay alpha now\n")
        UndoTests.edit(ann, 3..<8, "Alpha", group: 3)
        UndoTests.edit(ann, 3..<8, "omega", group: 3)
        #expect(UndoTests.undo(ann) == true)
        bob.deliver()
        #expect(daemon.documents["doc"]?.text.string == "go ALPHA beta\nsay alpha now\n")
        #expect(ann.string == bob.string && bob.string == daemon.documents["doc"]?.text.string)
        #expect(UndoTests.undo(ann, "document/redo") == true)
        #expect(daemon.documents["doc"]?.text.string == "go omega beta\nsay alpha now\n")
    }
}
