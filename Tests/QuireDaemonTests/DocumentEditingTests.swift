import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// Opening, editing and closing documents through the protocol, and every way an edit can be wrong.
@Suite struct DocumentEditingTests {
    static func setUp(text: String = "hello\nworld\n", encodings: [String] = ["utf-16"]) -> (Daemon, TestEditor) {
        var next: UInt64 = 0
        let daemon = Daemon(replicaSource: { next += 1; return ReplicaID(next) })
        let editor = TestEditor(daemon: daemon)
        editor.initialize(encodings: encodings)
        editor.open("notes", text: text)
        return (daemon, editor)
    }

    static func elementCount(_ daemon: Daemon, _ uri: String = "notes") -> UInt64 {
        daemon.documents[uri]?.text.versionVector.counts.values.reduce(0, +) ?? 0
    }

    @Test func openCreatesTheDocumentWithTheEditorsText() {
        let (daemon, editor) = Self.setUp()
        #expect(daemon.documents["notes"]?.text.string == "hello\nworld\n")
        let text = editor.request("document/text", ["uri": "notes"])
        #expect(text["result"]?["text"] == "hello\nworld\n")
        #expect(text["result"]?["hash"]?.stringValue == TextHashForTests.sha256("hello\nworld\n"))
        #expect(editor.request("document/list")["result"]?.arrayValue?.first?["lines"] == 3)
    }

    @Test func rangeEditIsAppliedAndAcknowledged() {
        let (daemon, editor) = Self.setUp()
        let reply = editor.edit(5..<5, with: "!")
        #expect(reply["result"]?["editorRevision"] == 1)
        #expect(daemon.documents["notes"]?.text.string == "hello!\nworld\n")
    }

    @Test func wholeLineResentForOneKeystrokeIsOneInsertion() {
        let (daemon, editor) = Self.setUp()
        let before = Self.elementCount(daemon)
        editor.text = Array("hello\nwor-ld\n".unicodeScalars)
        editor.sendEdit(["lines": ["start": 1, "end": 2], "newLines": ["wor-ld"]])
        #expect(daemon.documents["notes"]?.text.string == "hello\nwor-ld\n")
        #expect(Self.elementCount(daemon) == before + 1, "one new element, not a new line")
        // A whole line as a range replacement is reduced too.
        editor.text = Array("hello\nwor-ld?\n".unicodeScalars)
        editor.sendEdit(["range": ["start": ["line": 1, "character": 0], "end": ["line": 1, "character": 6]], "text": "wor-ld?"])
        #expect(Self.elementCount(daemon) == before + 2)
        // And so is the full text.
        editor.text = Array("hello\nwor-ld?\n.".unicodeScalars)
        editor.sendEdit(["text": "hello\nwor-ld?\n."])
        #expect(Self.elementCount(daemon) == before + 3)
        #expect(daemon.documents["notes"]?.text.string == "hello\nwor-ld?\n.")
    }

    @Test func lineChangesAtTheEndAndInsertingAndDeletingLines() {
        let (daemon, editor) = Self.setUp(text: "a\nb\nc")
        editor.sendEdit(["lines": ["start": 3, "end": 3], "newLines": ["d"]])
        #expect(daemon.documents["notes"]?.text.string == "a\nb\nc\nd")
        editor.sendEdit(["lines": ["start": 1, "end": 1], "newLines": ["x", "y"]])
        #expect(daemon.documents["notes"]?.text.string == "a\nx\ny\nb\nc\nd")
        editor.sendEdit(["lines": ["start": 4, "end": 6], "newLines": []])
        #expect(daemon.documents["notes"]?.text.string == "a\nx\ny\nb")
        editor.sendEdit(["lines": ["start": 0, "end": 4], "newLines": []])
        #expect(daemon.documents["notes"]?.text.string == "")
    }

    @Test(arguments: [
        (#"{"start":{"line":0,"character":6},"end":{"line":0,"character":6}}"#, -32011),
        (#"{"start":{"line":9,"character":0},"end":{"line":9,"character":0}}"#, -32011),
        (#"{"start":{"line":1,"character":2},"end":{"line":0,"character":1}}"#, -32011),
        (#"{"start":{"line":-1,"character":0},"end":{"line":0,"character":0}}"#, -32602),
    ])
    func badRangeIsRefusedAndChangesNothing(range: String, code: Int) throws {
        let (daemon, editor) = Self.setUp()
        let before = daemon.documents["notes"]?.text
        let reply = editor.request("document/edit", [
            "uri": "notes", "revision": 0, "changes": [["range": try JSONParser().parse(range), "text": "x"]],
        ])
        #expect(reply["error"]?["code"] == .integer(Int64(code)))
        #expect(daemon.documents["notes"]?.text == before)
    }

    @Test func aBadChangeAfterAGoodOneLeavesNoTrace() {
        let (daemon, editor) = Self.setUp()
        let reply = editor.request("document/edit", [
            "uri": "notes", "revision": 0, "changes": [
                ["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "ok "],
                ["lines": ["start": 7, "end": 8], "newLines": []],
            ],
        ])
        #expect(reply["error"]?["code"] == -32011)
        #expect(daemon.documents["notes"]?.text.string == "hello\nworld\n")
        // Later edits of the epoch were based on the refused one: refused too, until a resync.
        let next = editor.request("document/edit", ["uri": "notes", "revision": 0, "changes": [["text": "x"]]])
        #expect(next["error"]?["code"] == .integer(Int64(ResponseError.resyncNeededCode)))
        #expect(daemon.documents["notes"]?.text.string == "hello\nworld\n")
        // The resync keeps what the editor shows (its edit, and the good part of the refused one).
        let resync = editor.request("document/resync", ["uri": "notes", "text": "ok hello\nworld!\n", "base": "hello\nworld\n"])
        #expect(resync["result"]?["text"] == "ok hello\nworld!\n")
        #expect(resync["result"]?["epoch"] == 1)
        #expect(daemon.documents["notes"]?.text.string == "ok hello\nworld!\n")
        #expect(editor.request("document/edit", ["uri": "notes", "epoch": 1, "revision": 0, "changes": [["text": "x"]]])["result"]?["editorRevision"] == 1)
    }

    @Test func revisionFromTheFutureAndStaleEpochAndUnknownDocument() {
        let (daemon, editor) = Self.setUp()
        let future = editor.request("document/edit", ["uri": "notes", "revision": 5, "changes": [["text": "x"]]])
        #expect(future["error"]?["code"] == -32012)
        let stale = editor.request("document/edit", ["uri": "notes", "epoch": 3, "revision": 0, "changes": [["text": "x"]]])
        #expect(stale["error"]?["code"] == -32014)
        let unknown = editor.request("document/edit", ["uri": "other", "revision": 0, "changes": [["text": "x"]]])
        #expect(unknown["error"]?["code"] == -32010)
        #expect(daemon.documents["notes"]?.text.string == "hello\nworld\n")
    }

    @Test func badEditAsNotificationIsReportedInANotification() {
        let (daemon, editor) = Self.setUp()
        editor.notify("document/edit", ["uri": "notes", "revision": 0, "changes": [["range": ["start": ["line": 5, "character": 0], "end": ["line": 5, "character": 0]], "text": "x"]]])
        let refused = editor.take("document/editRefused").map { $0["params"] }
        #expect(refused.count == 1, "\(refused)")
        #expect(refused.first??["uri"] == "notes" && refused.first??["epoch"] == 0 && refused.first??["revision"] == 0)
        #expect(refused.first??["error"]?["code"] == -32011, "the error a request would have got")
        #expect(daemon.documents["notes"]?.text.string == "hello\nworld\n")
    }

    @Test(arguments: ["utf-8", "utf-16", "utf-32"])
    func positionsInEveryEncodingWithAstralAndCombiningCharacters(encoding: String) {
        let (daemon, editor) = Self.setUp(text: "a😀e\u{301}b\n𝄞x\n", encodings: [encoding])
        #expect(editor.encoding.rawValue == encoding)
        editor.edit(4..<4, with: "→")      // after the combining accent
        editor.edit(8..<9, with: "Y")      // replace x on the second line, after an astral character
        editor.edit(1..<2, with: "")       // delete the emoji
        #expect(daemon.documents["notes"]?.text.string == editor.string)
        #expect(editor.string == "ae\u{301}→b\n𝄞Y\n")
        // Inside a surrogate pair or a UTF-8 sequence is an error, not a crash.
        if encoding != "utf-32" {
            let reply = editor.request("document/edit", ["uri": "notes", "revision": 0, "changes": [
                ["range": ["start": ["line": 1, "character": 1], "end": ["line": 1, "character": 1]], "text": "z"]]])
            #expect(reply["error"]?["code"] == -32011)
        }
    }

    @Test func crlfTextRoundTrips() {
        let (daemon, editor) = Self.setUp(text: "one\r\ntwo\r\n")
        editor.edit(3..<3, with: "!")
        #expect(daemon.documents["notes"]?.text.string == "one!\r\ntwo\r\n")
        #expect(editor.request("document/text", ["uri": "notes"])["result"]?["text"] == "one!\r\ntwo\r\n")
    }

    /// Opening a document that exists with other text replaces nothing unless the person said
    /// so: refused (-32017) with nothing changed, then taken with minimal changes.
    @Test func joiningAnExistingDocumentWithOtherTextAsksFirst() {
        let (daemon, _) = Self.setUp(text: "shared text\nline two\n")
        let second = TestEditor(daemon: daemon)
        second.initialize()
        let refused = second.open("notes", text: "shared test\nline two\n")
        #expect(refused["error"]?["code"] == -32017)
        #expect(refused["error"]?["data"]?["characters"] == 21)
        #expect(daemon.documents["notes"]?.text.string == "shared text\nline two\n")
        #expect(second.request("document/text", ["uri": "notes"])["error"]?["code"] == -32010, "the refused open opened nothing")
        let reply = second.open("notes", text: "shared test\nline two\n", conflict: "take")
        #expect(reply["result"]?["created"] == false)
        #expect(reply["result"]?["changes"]?.arrayValue?.count == 1)
        #expect(second.string == "shared text\nline two\n")
        #expect(reply["result"]?["hash"]?.stringValue == TextHashForTests.sha256(second.string))
    }

    @Test func closeForgetsTheViewAndOpenTwiceIsAnError() {
        let (_, editor) = Self.setUp()
        #expect(editor.request("document/open", ["uri": "notes", "text": ""])["error"]?["code"] == -32013)
        #expect(editor.request("document/close", ["uri": "notes"])["result"] == .null)
        #expect(editor.request("document/text", ["uri": "notes"])["error"]?["code"] == -32010)
        #expect(editor.request("document/close", ["uri": "notes"])["error"]?["code"] == -32010)
    }

    /// An editor that lost its daemon reopens with `base`: what it typed meanwhile is merged
    /// with what the document gained from others, and both editors end with the merge.
    @Test func reopenWithBaseMergesWhatTheEditorTypedWhileAway() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        ann.open("doc", text: "one\ntwo\n")
        ann.edit(0..<0, with: "zero\n")
        let bob = TestEditor(daemon: daemon)
        bob.initialize(user: "bob")
        bob.uri = "doc"
        bob.text = Array("one\ntwo!\nthree\n".unicodeScalars)
        let reply = bob.request("document/open", ["uri": "doc", "text": "one\ntwo!\nthree\n", "base": "one\ntwo\n"])
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { bob.apply(change) }
        #expect(bob.string == "zero\none\ntwo!\nthree\n")
        ann.deliver()
        #expect(ann.string == bob.string)
        #expect(bob.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue == bob.string)
        // Without a base nothing says what carol's text has in common with the document: she
        // is asked, and merging keeps both.
        let carol = TestEditor(daemon: daemon)
        carol.initialize(user: "carol")
        #expect(carol.open("doc", text: "f(carol)\n")["error"]?["code"] == -32017)
        #expect(daemon.documents["doc"]?.text.string == bob.string)
        carol.open("doc", text: "f(carol)\n", conflict: "merge")
        #expect(carol.string == "zero\none\ntwo!\nthree\nf(carol)\n")
        bob.deliver()
        #expect(bob.string == carol.string)
    }
}
