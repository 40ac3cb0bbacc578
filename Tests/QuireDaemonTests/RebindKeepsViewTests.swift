import JSON
import QuireProtocol
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A rebind (`:saveas`, `write-file`): `document/close` with `keepView`, then `document/open`
/// with the new `file` and the view, epoch and revision the editor is at. The reopen resolves
/// what the editor shows against that view by identity, so a partner's edit the editor has not
/// applied yet merges with nothing asked, and the editor's undo history goes on.
@Suite struct RebindKeepsViewTests {
    /// Ann typed `f(a1)` (acknowledged); bob replaced `<A1>` by `<B1>`, which ann has not
    /// applied; ann typed `g(a2)` and did not send it yet. Returns the new file's path.
    static func annRebindsWhileBobTypes() -> (Daemon, TestEditor, TestEditor, String) {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "x <A1> y\n")
        ann.edit(9..<9, with: "f(a1)\n")
        bob.deliver()
        ann.holdIncoming = true
        bob.edit(2..<6, with: "<B1>")
        ann.text.append(contentsOf: Array("g(a2)\n".unicodeScalars))
        let file = DaemonProcess.temporaryDirectory("rebind") + "/renamed.txt"
        return (daemon, ann, bob, file)
    }

    static func reopen(_ ann: TestEditor, file: String, withView: Bool = true) -> JSONValue {
        var params: [String: JSONValue] = ["uri": .string(ann.uri), "text": .string(ann.string), "file": .string(file)]
        if withView, let view = ann.view {
            params["view"] = .string(view)
            params["epoch"] = .integer(Int64(ann.epoch))
            params["revision"] = .integer(Int64(ann.daemonRevision))
        }
        let reply = ann.request("document/open", .object(params))
        for change in reply["result"]?["changes"]?.arrayValue ?? [] { ann.apply(change) }
        if let result = reply["result"] {
            ann.epoch = Int(result["epoch"]?.integerValue ?? 0)
            ann.view = result["view"]?.stringValue
            ann.editorRevision = 0
            ann.daemonRevision = 0
        }
        return reply
    }

    @Test func aRebindKeepingTheViewMergesAPartnersEditInFlightWithNothingAsked() {
        let (daemon, ann, bob, file) = Self.annRebindsWhileBobTypes()
        let view = ann.view
        #expect(ann.request("document/close", ["uri": "doc", "keepView": true])["result"] == .null)
        let reply = Self.reopen(ann, file: file)
        #expect(reply["error"] == nil, "\(reply)")
        #expect(ann.view == view, "the same view goes on")
        let expected = "x <B1> y\nf(a1)\ng(a2)\n"
        #expect(daemon.documents["doc"]?.text.string == expected)
        #expect(daemon.documents["doc"]?.file?.path == file)
        #expect(ann.string == expected)
        bob.deliver()
        #expect(bob.string == expected)
        // Her undo history went on: the step typed before the rebind is hers to undo.
        #expect(ann.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
        #expect(ann.request("document/undo", ["uri": "doc"])["result"]?["done"] == true)
        #expect(daemon.documents["doc"]?.text.string == "x <B1> y\n")
    }

    /// Without `keepView` the close ends the view: the same reopen has nothing to resolve against
    /// and the document holds other text, so it is refused and the person would be asked.
    @Test func aPlainCloseEndsTheViewSoTheSameReopenAsks() {
        let (daemon, ann, _, file) = Self.annRebindsWhileBobTypes()
        #expect(ann.request("document/close", ["uri": "doc"])["result"] == .null)
        let reply = Self.reopen(ann, file: file)
        #expect(reply["error"]?["code"] == .integer(Int64(ResponseError.documentDiffersCode)), "\(reply)")
        #expect(daemon.documents["doc"]?.text.string == "x <B1> y\nf(a1)\n", "nothing changed")
    }

    @Test func keepViewMustBeABoolean() {
        let (daemon, ann, _, _) = Self.annRebindsWhileBobTypes()
        let reply = ann.request("document/close", ["uri": "doc", "keepView": "yes"])
        #expect(reply["error"]?["code"] == -32602, "\(reply)")
        #expect(daemon.sessions.values.contains { $0.view(of: "doc") != nil }, "still open")
    }
}
