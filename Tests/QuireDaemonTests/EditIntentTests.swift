import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// What a person typed ends up intact, once, where they typed it, whatever form the editor sent
/// the change in and whatever others did to the neighbouring words at the same time
/// (protocol/decisions/edit-intent.md).
@Suite struct EditIntentTests {
    /// How an editor reports one change: as LSP ranges, as whole changed lines (Vim), or as its
    /// whole text; with or without its cursor.
    enum Form: String, CaseIterable, CustomTestStringConvertible {
        case range, severalRanges, lines, linesWithCursor, full, fullWithCursor
        var testDescription: String { rawValue }
        var sendsCursor: Bool { self == .linesWithCursor || self == .fullWithCursor }
    }

    /// `editor` replaces `range` (scalar offsets) with `replacement`, telling the daemon in `form`
    /// (with `editID` when given). Returns the reply and the changes sent.
    @discardableResult
    static func type(_ editor: TestEditor, _ range: Range<Int>, _ replacement: String, as form: Form,
                     editID: String? = nil) -> (reply: JSONValue, changes: JSONValue) {
        let start = editor.position(of: range.lowerBound), end = editor.position(of: range.upperBound)
        editor.text.replaceSubrange(range, with: Array(replacement.unicodeScalars))
        let cursor = editor.position(of: range.lowerBound + replacement.unicodeScalars.count)
        let change: JSONValue
        var more: [JSONValue] = []
        switch form {
        case .range:
            change = ["range": ["start": start, "end": end], "text": .string(replacement)]
        case .severalRanges:
            // The removal, then the insertion in two halves (as an editor that reports each step).
            let scalars = Array(replacement.unicodeScalars)
            let half = scalars.count / 2
            change = ["range": ["start": start, "end": end], "text": .string(String(String.UnicodeScalarView(scalars[..<half])))]
            if half < scalars.count {
                editor.text.replaceSubrange(range.lowerBound..<(range.lowerBound + scalars.count), with: scalars[..<half])
                let middle = editor.position(of: range.lowerBound + half)
                editor.text.replaceSubrange(range.lowerBound..<(range.lowerBound + half), with: scalars)
                more = [["range": ["start": middle, "end": middle], "text": .string(String(String.UnicodeScalarView(scalars[half...])))]]
            }
        case .lines, .linesWithCursor:
            // The lines the change touched, resent whole.
            let firstLine = Int(start["line"]?.integerValue ?? 0)
            let oldLastLine = Int(end["line"]?.integerValue ?? 0)
            let newLastLine = Int(cursor["line"]?.integerValue ?? 0)
            let lines = editor.string.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            change = ["lines": ["start": .integer(Int64(firstLine)), "end": .integer(Int64(oldLastLine + 1))],
                      "newLines": .array(lines[firstLine...newLastLine].map { .string($0) })]
        case .full, .fullWithCursor:
            change = ["text": .string(editor.string)]
        }
        editor.editorRevision += 1
        let changes = JSONValue.array([change] + more)
        var params: [String: JSONValue] = ["uri": .string(editor.uri), "epoch": .integer(Int64(editor.epoch)),
                                           "revision": .integer(Int64(editor.daemonRevision)), "changes": changes]
        if form.sendsCursor { params["cursor"] = cursor }
        if let editID { params["editId"] = .string(editID) }
        return (editor.request("document/edit", .object(params)), changes)
    }

    /// The example: one person types `them ` before `then` while the other removes `then`.
    @Test(arguments: Form.allCases)
    func typingBeforeAWordTheOtherRemovesKeepsTheTypedWord(form: Form) {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "see the then\n")
        ann.holdIncoming = true
        bob.holdIncoming = true
        Self.type(ann, 8..<8, "them ", as: form)
        bob.edit(8..<12, with: "")
        ann.deliver()
        bob.deliver()
        ann.deliver()
        #expect(daemon.documents["doc"]?.text.string == "see the them \n")
        #expect(ann.string == bob.string && ann.string == "see the them \n")
    }

    /// A token replaced in one change is removed and inserted whole: a concurrent removal of the
    /// old token cannot leave letters of the new one behind, nor keep letters of the old.
    @Test(arguments: Form.allCases)
    func aReplacedTokenIsReplacedWhole(form: Form) {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "ab x<B12>y cd\n")
        ann.holdIncoming = true
        bob.holdIncoming = true
        Self.type(ann, 3..<10, "xA30y", as: form)
        bob.edit(3..<10, with: "")
        ann.deliver()
        bob.deliver()
        ann.deliver()
        #expect(daemon.documents["doc"]?.text.string == "ab xA30y cd\n")
        #expect(ann.string == bob.string)
    }

    /// One editor types `f(b71)` before `f(f26)` and replaces `{b4}` in one change without a
    /// cursor (whole lines, the whole text, a reopen), while the other replaces its own `f(f26)`:
    /// both new tokens end up whole. (Seed 226 of the chaos test: the typed token took the `f(`
    /// of `f(f26)`, and its replacement then removed that `f(` from `f(b71)`.)
    @Test(arguments: [Form.lines, .full])
    func aTokenTypedBeforeAnotherThatIsReplacedAtOnceStaysWhole(form: Form) {
        let line = "middle {f24} f(f26) <G30> {f29} f(f21) [s0] f(f31) {b4} {s0}\n"
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: line)
        ann.holdIncoming = true
        bob.holdIncoming = true
        let typed = "middle {f24} f(b71) f(f26) <G30> {f29} f(f21) [s0] f(f31) [b73] {s0}\n"
        ann.text = Array(typed.unicodeScalars)
        ann.sendEdit(form == .full ? ["text": .string(typed)] : ["lines": ["start": 0, "end": 1], "newLines": [.string(String(typed.dropLast()))]])
        bob.edit(13..<19, with: "[f118]")
        ann.deliver()
        bob.deliver()
        ann.deliver()
        #expect(daemon.documents["doc"]?.text.string == "middle {f24} f(b71) [f118] <G30> {f29} f(f21) [s0] f(f31) [b73] {s0}\n")
        #expect(ann.string == bob.string)
    }

    /// Enter in the middle of a line while the other types at its end: the typed text ends up at
    /// the end of the new second line, where it was typed.
    @Test(arguments: Form.allCases)
    func splittingALineWhileTheOtherTypesAtItsEnd(form: Form) {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "hello world\n")
        ann.holdIncoming = true
        bob.holdIncoming = true
        Self.type(ann, 5..<6, "\n", as: form)
        Self.type(bob, 11..<11, " again", as: form)
        ann.deliver()
        bob.deliver()
        ann.deliver()
        #expect(daemon.documents["doc"]?.text.string == "hello\nworld again\n")
        #expect(ann.string == bob.string)
    }

    /// The race three editors found: Vera opens a line below the last one (`o`, sent as an empty
    /// line) and types on it, while Nora, who has not seen that yet, adds a line at the same place.
    /// Each line stays whole; neither is typed into the other.
    @Test func openingALineAndTypingOnItWhileAnotherAddsALineThere() {
        let (daemon, vera, nora) = ConcurrentEditingTests.twoEditors(sharing: "The plan\n")
        vera.holdIncoming = true
        nora.holdIncoming = true
        vera.text = Array("The plan\n\n".unicodeScalars)
        vera.sendEdit(["lines": ["start": 1, "end": 1], "newLines": [""]])
        vera.text = Array("The plan\nfrom vera\n".unicodeScalars)
        vera.sendEdit(["lines": ["start": 1, "end": 2], "newLines": ["from vera"]])
        nora.text = Array("The plan\nfrom nora\n".unicodeScalars)
        nora.sendEdit(["lines": ["start": 1, "end": 1], "newLines": ["from nora"]])
        for _ in 0..<3 { vera.deliver(); nora.deliver() }
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text == "The plan\nfrom vera\nfrom nora\n" || text == "The plan\nfrom nora\nfrom vera\n", "\(text.debugDescription)")
        #expect(vera.string == text && nora.string == text)
    }

    // MARK: Reopening after the daemon died

    static func daemon(at path: String) throws -> Daemon {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var next: UInt64 = 500
        return Daemon(configuration: Daemon.Configuration(), logger: logger, replicaSource: { next += 1; return ReplicaID(next) },
                      store: try DocumentStore(path: path, snapshotLogBytes: 64, logger: logger))
    }

    /// Ann's edit ` world` is applied and on disk, but the daemon dies before she reads the reply;
    /// she types `!` meanwhile. Her reopen must show each once, whether she names her edits
    /// (`pending`, by edit ID) or not (identical changes count once).
    @Test(arguments: [true, false])
    func anEditWhoseReplyWasLostCountsOnce(namingEdits: Bool) throws {
        let path = DaemonProcess.temporaryDirectory("lost-reply")
        let change: JSONValue = ["range": ["start": ["line": 0, "character": 5], "end": ["line": 0, "character": 5]], "text": " world"]
        do {
            let daemon = try Self.daemon(at: path)
            let ann = TestEditor(daemon: daemon)
            ann.initialize()
            ann.open("doc", text: "hello")
            // Earlier edits with IDs, so that snapshots (every 64 bytes of log) must carry them.
            for n in 0..<5 {
                _ = ann.request("document/edit", ["uri": "doc", "revision": 0, "editId": .string("ann-\(n)"),
                                                   "changes": [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "-"]]])
                _ = ann.request("document/edit", ["uri": "doc", "revision": 0, "editId": .string("ann-\(n)b"),
                                                   "changes": [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 1]], "text": ""]]])
            }
            _ = ann.request("document/edit", ["uri": "doc", "revision": 0, "editId": "ann-lost", "changes": [change]])
            daemon.commit()
            #expect(daemon.documents["doc"]?.text.string == "hello world")
        }
        let daemon = try Self.daemon(at: path)
        #expect(daemon.documents["doc"]?.appliedEditIDs.contains("ann-lost") == true)
        let ann = TestEditor(daemon: daemon)
        ann.initialize()
        var params: [String: JSONValue] = ["uri": "doc", "text": "hello world!", "base": "hello"]
        if namingEdits { params["pending"] = [["editId": "ann-lost", "changes": [change]]] }
        let reply = ann.request("document/open", .object(params))
        #expect(reply["result"]?["created"] == false)
        #expect(daemon.documents["doc"]?.text.string == "hello world!")
    }

    /// An edit in flight that never reached the daemon is typing done while it was away: it is
    /// merged, not dropped, even when the editor names it.
    @Test func anEditThatNeverArrivedIsMerged() throws {
        let path = DaemonProcess.temporaryDirectory("never-arrived")
        do {
            let daemon = try Self.daemon(at: path)
            let ann = TestEditor(daemon: daemon)
            ann.initialize()
            ann.open("doc", text: "hello")
            daemon.commit()
        }
        let daemon = try Self.daemon(at: path)
        let ann = TestEditor(daemon: daemon)
        ann.initialize()
        let change: JSONValue = ["range": ["start": ["line": 0, "character": 5], "end": ["line": 0, "character": 5]], "text": " world"]
        _ = ann.request("document/open", ["uri": "doc", "text": "hello world", "base": "hello",
                                          "pending": [["editId": "ann-1", "changes": [change]]]])
        #expect(daemon.documents["doc"]?.text.string == "hello world")
    }

    @Test func pendingEditsNeedABaseAndAnID() {
        let (_, ann, _) = ConcurrentEditingTests.twoEditors(sharing: "x")
        let noBase = ann.request("document/open", ["uri": "other", "text": "", "pending": []])
        #expect(noBase["error"]?["code"] == -32602)
        let noID = ann.request("document/open", ["uri": "other", "text": "", "base": "", "pending": [["changes": []]]])
        #expect(noID["error"]?["message"]?.stringValue?.contains("editId") == true)
        let long = String(repeating: "e", count: EditDocumentMessage.maxEditIDBytes + 1)
        let tooLong = ann.request("document/edit", ["uri": "doc", "revision": 0, "editId": .string(long), "changes": []])
        #expect(tooLong["error"]?["code"] == -32602)
    }
}
