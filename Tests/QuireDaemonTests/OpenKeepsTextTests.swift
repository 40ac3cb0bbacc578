import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// `document/open` never destroys text (protocol/README.md, *Open never destroys text*).
@Suite struct OpenKeepsTextTests {
    /// Bob shares "doc" as `their plan f(x)`; ann starts a session of her own.
    static func bobSharesThenAnnArrives() -> (Daemon, TestEditor, TestEditor) {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let bob = TestEditor(daemon: daemon)
        bob.initialize(user: "bob")
        bob.open("doc", text: "their plan f(x)\n")
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        return (daemon, bob, ann)
    }

    /// An open that died before its reply left an empty, never-edited document: the editor's
    /// next open keeps its whole buffer.
    @Test func aNeverEditedDocumentTakesTheEditorsText() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let first = TestEditor(daemon: daemon)
        first.initialize(user: "ann")
        first.open("doc", text: "")
        _ = first.request("document/close", ["uri": "doc"])
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        let reply = ann.open("doc", text: "my own plan, never shared <P1>\n")
        #expect(reply["result"]?["created"] == false)
        #expect(ann.string == "my own plan, never shared <P1>\n")
        #expect(daemon.documents["doc"]?.text.string == ann.string)
    }

    /// A name that exists with other text: refused with nothing changed, then each choice.
    @Test(arguments: ["take", "merge"])
    func aDocumentWithOtherTextAsksThePerson(choice: String) {
        let (daemon, bob, ann) = Self.bobSharesThenAnnArrives()
        let refused = ann.open("doc", text: "my own plan \"s\"\n")
        #expect(refused["error"]?["code"] == -32017)
        #expect(refused["error"]?["data"]?["choices"] == ["take", "merge"])
        #expect(daemon.documents["doc"]?.text.string == "their plan f(x)\n")
        ann.open("doc", text: "my own plan \"s\"\n", conflict: choice)
        let expected = choice == "take" ? "their plan f(x)\n" : "their plan f(x)\nmy own plan \"s\"\n"
        #expect(ann.string == expected)
        #expect(daemon.documents["doc"]?.text.string == expected)
        bob.deliver()
        #expect(bob.string == expected)
    }

    /// An empty buffer (one empty line to Vim) or the same text needs no question.
    @Test(arguments: ["", "\n", "their plan f(x)\n"])
    func nothingToKeepNeedsNoQuestion(text: String) {
        let (daemon, bob, ann) = Self.bobSharesThenAnnArrives()
        #expect(ann.open("doc", text: text)["result"]?["created"] == false)
        #expect(ann.string == "their plan f(x)\n")
    }

    /// A reload of a bound file changed outside (Vim's checktime, `:e!`): the editor reopens with
    /// the file as it is on disk; the outside change comes in once, and what the editor shows
    /// beyond the file is kept too.
    @Test(arguments: [false, true])
    func anOpenWithTheBoundFileMergesTheOutsideChangeOnce(editorTypedMore: Bool) throws {
        let path = try FileBindingTests.file("one <A1>\ntwo\n")
        let daemon = ConcurrentEditingTests.makeDaemon()
        let bob = FileBindingTests.boundEditor(path, text: "one <A1>\ntwo\n", on: daemon)
        bob.edit(bob.text.count..<bob.text.count, with: "bob f(x)\n")
        try "one <A1>\ntwo <O1>\n".write(toFile: path, atomically: false, encoding: .utf8)
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        let shown = "one <A1>\ntwo <O1>\n" + (editorTypedMore ? "ann \"s\"\n" : "")
        let reply = FileBindingTests.openBound(ann, path, text: shown)
        #expect(reply["error"] == nil, "\(reply)")
        let text = daemon.documents["doc"]?.text.string ?? ""
        #expect(text.components(separatedBy: "<O1>").count == 2, "\(text.debugDescription)")
        #expect(text.contains("bob f(x)\n"), "\(text.debugDescription)")
        #expect(text.contains("ann \"s\"") == editorTypedMore, "\(text.debugDescription)")
        #expect(ann.string == text)
    }
}
