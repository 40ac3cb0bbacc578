import Foundation
import JSON
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// `document/undo` and `document/redo`: a session reverts its own edits, step by step, and
/// never what others typed, even when they typed in between or inside.
@Suite struct UndoTests {
    static func editors(on daemon: Daemon = ConcurrentEditingTests.makeDaemon()) -> (TestEditor, TestEditor) {
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "")
        bob.open("doc", text: "")
        return (ann, bob)
    }

    static func edit(_ editor: TestEditor, _ range: Range<Int>, _ text: String, group: Int) {
        let start = editor.position(of: range.lowerBound), end = editor.position(of: range.upperBound)
        editor.text.replaceSubrange(range, with: Array(text.unicodeScalars))
        editor.editorRevision += 1
        let reply = editor.request("document/edit", ["uri": "doc", "epoch": .integer(Int64(editor.epoch)), "revision": .integer(Int64(editor.daemonRevision)),
                                                     "undoGroup": .integer(Int64(group)),
                                                     "changes": [["range": ["start": start, "end": end], "text": .string(text)]]])
        #expect(reply["result"] != nil, "\(reply)")
    }

    static func undo(_ editor: TestEditor, _ method: String = "document/undo") -> Bool? {
        let done = editor.request(method, ["uri": "doc"])["result"]?["done"]
        editor.deliver()
        return done == .bool(true) ? true : done == .bool(false) ? false : nil
    }

    @Test func undoRevertsOnlyTheSessionsOwnSteps() {
        let (ann, bob) = Self.editors()
        Self.edit(ann, 0..<0, "hel", group: 1)
        Self.edit(ann, 3..<3, "lo", group: 1)
        bob.deliver()
        bob.edit(5..<5, with: " world")
        ann.deliver()
        Self.edit(ann, 0..<2, "", group: 2)
        bob.deliver()
        #expect(ann.string == "llo world")
        #expect(Self.undo(ann) == true)
        #expect(ann.string == "hello world")
        #expect(Self.undo(ann) == true)
        #expect(ann.string == " world", "both edits of undo block 1 went together; bob's text stayed")
        #expect(Self.undo(ann) == false)
        #expect(Self.undo(ann, "document/redo") == true)
        #expect(ann.string == "hello world")
        #expect(Self.undo(ann, "document/redo") == true)
        #expect(ann.string == "llo world")
        bob.deliver()
        #expect(bob.string == ann.string)
        #expect(ann.hashMismatches == 0 && bob.hashMismatches == 0)
    }

    @Test func removedTextComesBackWhereItStoodAmongOthersText() {
        let (ann, bob) = Self.editors()
        Self.edit(ann, 0..<0, "abcdef", group: 1)
        bob.deliver()
        Self.edit(ann, 1..<5, "", group: 2)          // "af"
        bob.deliver()
        bob.edit(1..<1, with: "XY")                   // "aXYf": typed where "bcde" was
        ann.deliver()
        #expect(Self.undo(ann) == true)
        bob.deliver()
        #expect(ann.string == bob.string)
        #expect(ann.string.contains("bcde") && ann.string.contains("XY") && ann.string.hasPrefix("a") && ann.string.hasSuffix("f"))
    }

    @Test func othersEditsInsideAStepAreKeptAndANewEditClearsRedo() {
        let (ann, bob) = Self.editors()
        Self.edit(ann, 0..<0, "hello", group: 1)
        bob.deliver()
        bob.edit(2..<4, with: "")                     // bob removes "ll": "heo"
        bob.edit(0..<0, with: ">")
        ann.deliver()
        #expect(Self.undo(ann) == true)
        bob.deliver()
        #expect(ann.string == ">" && bob.string == ">")
        #expect(Self.undo(ann, "document/redo") == true)
        #expect(ann.string == ">heo", "redo puts back what the undo removed, not what bob removed")
        #expect(Self.undo(ann) == true)
        Self.edit(ann, 1..<1, "new", group: 3)
        #expect(Self.undo(ann, "document/redo") == false, "a new edit clears redo")
        #expect(ann.request("document/undo", ["uri": "nope"])["error"]?["code"] == -32010)
    }

    /// What an editor typed while its daemon was away comes in with its reopen (`base` and
    /// `text`); `u` right after takes out that typing, as one step of its own, and leaves what
    /// others typed meanwhile.
    @Test func typingMergedByAReopenIsOneUndoStepOfItsOwn() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let (ann, bob) = Self.editors(on: daemon)
        ann.edit(0..<0, with: "kept\n")
        bob.deliver()
        bob.edit(5..<5, with: "bob\n")
        // Ann's editor lost its daemon, typed a line, and reopens in a new session.
        let again = TestEditor(daemon: daemon)
        again.initialize(user: "ann")
        again.uri = "doc"
        again.text = Array("kept\nwhile away\n".unicodeScalars)
        let reply = again.request("document/open", ["uri": "doc", "text": "kept\nwhile away\n", "base": "kept\n"])
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { again.apply(change) }
        #expect(again.string == "kept\nwhile away\nbob\n" || again.string == "kept\nbob\nwhile away\n", "\(again.string)")
        #expect(Self.undo(again) == true)
        #expect(again.string == "kept\nbob\n", "the reopen's typing went, bob's line stayed")
        #expect(Self.undo(again) == false, "the old session's steps are not this one's")
    }

    /// Vim's `:%s` reaches the daemon as every line replaced (`lines` change); its `u` is
    /// `document/undo`. Whatever the number of lines, the substitution is the few characters
    /// changed in each line, and its undo removes exactly what it inserted and puts back exactly
    /// what it removed, by identity: what the other person typed inside and between the changed
    /// lines stays whole and in place, and redo brings the substitution back around it.
    @Test(arguments: [200, 2_000])
    func undoOfALargeSubstitutionLeavesOthersWordsInPlace(lines count: Int) {
        let (ann, bob) = Self.editors()
        let original = (0..<count).map { String(format: "row %04d mid f(x) text here", $0) }
        let substituted = original.map { $0.replacingOccurrences(of: "text", with: "TEXT") }
        ann.edit(0..<0, with: original.joined(separator: "\n") + "\n")
        bob.deliver()
        // :%s/text/TEXT/g, one undo block.
        ann.text = Array((substituted.joined(separator: "\n") + "\n").unicodeScalars)
        ann.editorRevision += 1
        let reply = ann.request("document/edit", [
            "uri": "doc", "epoch": .integer(Int64(ann.epoch)), "revision": .integer(Int64(ann.daemonRevision)), "undoGroup": 7,
            "changes": [["lines": ["start": 0, "end": .integer(Int64(count))], "newLines": .array(substituted.map { .string($0) })]],
        ])
        #expect(reply["result"] != nil, "\(reply)")
        bob.deliver()
        #expect(bob.string == ann.string)
        // Bob types inside some 30 changed lines (before and after the changed word) and
        // adds a line of his own between two changed lines, last line first so offsets hold.
        func lineStart(_ line: Int, in text: [Unicode.Scalar]) -> Int {
            var offset = 0, seen = 0
            while seen < line { if text[offset] == "\n" { seen += 1 }; offset += 1 }
            return offset
        }
        var expectedUndone = original, expectedRedone = substituted
        for line in stride(from: count - 3, through: 0, by: -max(7, count / 30)) {
            let start = lineStart(line, in: bob.text)
            bob.edit((start + 22)..<(start + 22), with: " \"s\"")                 // after "TEXT"
            bob.edit((start + 13)..<(start + 13), with: "<B\(line)> ")            // before "f(x)"
            bob.edit(start..<start, with: "g(<C\(line)>)\n")                     // a line between
            for k in [line] {
                expectedRedone[k] = String(format: "row %04d mid <B%d> f(x) TEXT \"s\" here", k, k)
                expectedUndone[k] = String(format: "row %04d mid <B%d> f(x) text \"s\" here", k, k)
                expectedRedone.insert("g(<C\(k)>)", at: k)
                expectedUndone.insert("g(<C\(k)>)", at: k)
            }
        }
        ann.deliver()
        #expect(ann.string == bob.string)
        #expect(ann.string == expectedRedone.joined(separator: "\n") + "\n")
        #expect(Self.undo(ann) == true)
        bob.deliver()
        #expect(ann.string == expectedUndone.joined(separator: "\n") + "\n", "the substitution went, every word of bob's in place")
        #expect(bob.string == ann.string)
        #expect(Self.undo(ann, "document/redo") == true)
        bob.deliver()
        #expect(ann.string == expectedRedone.joined(separator: "\n") + "\n", "redo brings the substitution back")
        #expect(bob.string == ann.string)
        #expect(ann.hashMismatches == 0 && bob.hashMismatches == 0 && ann.dropped == 0)
    }

    /// The substitution itself is per line: one small removal and insertion per changed word,
    /// never one replacement of the whole range (what made its undo carry others' words away).
    @Test func aSubstitutionOfEveryLineStaysPerLine() {
        let old = (0..<2_000).map { "row \($0) text here\n" }.joined()
        let new = old.replacingOccurrences(of: "text", with: "TEXT")
        let edits = TextDiff.edits(from: old, to: new)
        #expect(edits.count == 2_000)
        #expect(edits.allSatisfy { $0.range.count == 4 && $0.replacement == Array("TEXT".unicodeScalars) })
        #expect(String(String.UnicodeScalarView(TextDiff.apply(edits, to: Array(old.unicodeScalars)))) == new)
    }

    /// Undoing a paste or a large deletion is one operation, not one per character.
    @Test func undoingAStretchIsOneOperation() {
        let paste = Array(String(repeating: "0123456789\n", count: 500).unicodeScalars)
        var document = ReplicatingText("start\n", replica: ReplicaID(1))
        var history = UndoHistory()
        let before = document
        let pasted = document.replace(6..<6, with: paste)
        history.record(pasted, before: before, group: 1)
        let afterPaste = document
        let removed = document.replace(100..<4100, with: [])
        history.record(removed, before: afterPaste, group: 2)
        var copy = document
        copy.replica = ReplicaID(9)
        let restored = history.undo(in: &copy)
        #expect(restored.count == 1)
        #expect(copy.string == afterPaste.string)
        let unpasted = history.undo(in: &copy)
        #expect(unpasted.count == 1)
        #expect(copy.string == "start\n")
        #expect(history.redo(in: &copy).count <= 3, "one insertion per replica's stretch of the paste")
        #expect(copy.string == afterPaste.string)
    }

    /// Memory stays bounded: the oldest steps go past the character limit, and an edit larger
    /// than the limit is not kept (undo stops there instead of reaching past it).
    @Test func historyIsBoundedBySize() {
        var document = ReplicatingText(replica: ReplicaID(1))
        var history = UndoHistory()
        let chunk = Array(String(repeating: "x", count: UndoHistory.characterLimit / 4).unicodeScalars)
        for group in 0..<6 {
            let before = document
            history.record(document.replace(document.count..<document.count, with: chunk), before: before, group: group)
        }
        #expect(history.undoSteps.reduce(0) { $0 + $1.size } <= UndoHistory.characterLimit)
        #expect(history.undoSteps.count == 4, "the two oldest steps went")
        let before = document
        history.record(document.replace(0..<0, with: Array(repeating: "y", count: UndoHistory.characterLimit + 1)), before: before, group: 9)
        #expect(history.undoSteps.isEmpty)
        var copy = document
        #expect(history.undo(in: &copy).isEmpty)
    }
}
