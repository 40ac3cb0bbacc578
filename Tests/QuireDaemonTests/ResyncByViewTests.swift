import JSON
import QuireProtocol
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// `document/resync` with `text`, `epoch` and `revision`: what the editor typed since what it was
/// sent is resolved against the view's copy at that revision, by identity, so the client keeps no
/// base text of its own; bad parameters are refused with nothing changed.
@Suite struct ResyncByViewTests {
    /// Ann's edit is refused (a range past the end); she types on; bob meanwhile replaced `<A1>`.
    static func annRefusedWhileBobReplaces() -> (Daemon, TestEditor, TestEditor) {
        let (daemon, ann, bob) = ConcurrentEditingTests.twoEditors(sharing: "x <A1> y\n")
        ann.holdIncoming = true
        bob.edit(2..<6, with: "<B1>")
        let refused = ann.request("document/edit", ["uri": "doc", "epoch": 0, "revision": 0, "changes": [
            ["range": ["start": ["line": 7, "character": 0], "end": ["line": 7, "character": 0]], "text": "f(x)"],
        ]])
        #expect(refused["error"]?["code"] == -32011)
        ann.text.append(contentsOf: Array("f(a2)\n".unicodeScalars))
        return (daemon, ann, bob)
    }

    @Test func aResyncKeepsWhatWasTypedAndWhatOthersDidByIdentity() {
        let (daemon, ann, bob) = Self.annRefusedWhileBobReplaces()
        let reply = ann.request("document/resync", ["uri": "doc", "text": .string(ann.string), "epoch": 0, "revision": 0])
        #expect(reply["result"]?["text"] == "x <B1> y\nf(a2)\n", "\(reply)")
        #expect(reply["result"]?["epoch"] == 1)
        #expect(daemon.documents["doc"]?.text.string == "x <B1> y\nf(a2)\n")
        bob.deliver()
        #expect(bob.string == "x <B1> y\nf(a2)\n")
    }

    @Test(arguments: [
        (["text": "x"] as JSONValue, -32602),                                     // nothing says what it is based on
        (["text": "x", "epoch": 0] as JSONValue, -32602),                         // epoch without revision
        (["epoch": 0, "revision": 0] as JSONValue, -32602),                       // no text
        (["text": "x", "epoch": 5, "revision": 0] as JSONValue, -32014),          // another epoch
        (["text": "x", "epoch": 0, "revision": 9] as JSONValue, -32602),          // a revision it never was at
    ])
    func badResyncsAreRefusedAndChangeNothing(params: JSONValue, code: Int) {
        let (daemon, ann, _) = Self.annRefusedWhileBobReplaces()
        var object = params.objectValue ?? [:]
        object["uri"] = "doc"
        let reply = ann.request("document/resync", .object(object))
        #expect(reply["error"]?["code"] == .integer(Int64(code)), "\(reply)")
        #expect(daemon.documents["doc"]?.text.string == "x <B1> y\n")
        let next = ann.request("document/edit", ["uri": "doc", "epoch": 0, "revision": 0, "changes": [["text": "x"]]])
        #expect(next["error"]?["code"] == .integer(Int64(ResponseError.resyncNeededCode)), "the epoch is still refused")
    }
}
