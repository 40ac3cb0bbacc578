import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A frame of peer operations is judged one operation at a time, against the copy the earlier ones
/// left, and refused whole, before any of it is applied, when one of them is invalid there.
@Suite struct PeerBatchTests {
    static func text(_ daemon: Daemon, _ uri: String = "notes") -> String? { daemon.documents[uri]?.text.string }

    /// One editor edit made of two changes: `<D56>` typed at `column` of line 0, then removed.
    static func typeAndRemove(_ editor: TestEditor, token: String, at column: Int) {
        let start: JSONValue = ["line": 0, "character": .integer(Int64(column))]
        let end: JSONValue = ["line": 0, "character": .integer(Int64(column + token.utf16.count))]
        editor.editorRevision += 1
        let reply = editor.request("document/edit", [
            "uri": .string(editor.uri), "epoch": .integer(Int64(editor.epoch)), "revision": .integer(Int64(editor.daemonRevision)),
            "changes": [["range": ["start": start, "end": start], "text": .string(token)], ["range": ["start": start, "end": end], "text": ""]],
        ])
        #expect(reply["error"] == nil, "\(reply)")
    }

    @Test func insertAndRemoveInOneEditConvergesAndRelaysAlongAChain() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200), c = net.makeDaemon(300)
        let ann = TestEditor(daemon: a)
        ann.initialize()
        ann.open("notes", text: "x f(x) y\n")
        let ab = try net.link(a, b), bc = try net.link(b, c)
        net.pump([a, b, c])
        #expect(Self.text(c) == "x f(x) y\n")
        Self.typeAndRemove(ann, token: "<D56>", at: 2)
        // No tick: the batch itself must arrive whole, not a digest round after it.
        net.pump([a, b, c])
        #expect(Self.text(a) == "x f(x) y\n")
        #expect(Self.text(b) == "x f(x) y\n", "b kept the insertion and dropped its removal")
        #expect(Self.text(c) == "x f(x) y\n", "b relayed only the insertion")
        // The chain goes on working: Cat types after the token's place.
        let cat = TestEditor(daemon: c)
        cat.initialize()
        cat.open("notes", text: "x f(x) y\n")
        cat.edit(2..<2, with: "<A17>")
        net.pump([a, b, c])
        ann.deliverInbox()
        #expect(ann.string == "x <A17>f(x) y\n" && Self.text(b) == ann.string)
        #expect([ab.a, ab.b, bc.a, bc.b].allSatisfy { $0?.state == .established })
    }

    @Test func aFrameWhoseInsertionsContradictEachOtherIsRefusedWhole() throws {
        let (net, a, b, ann, wire) = try PeerSyncTests.linkedWithNotes(300)
        defer { _ = ann }
        guard let bDocument = b.documents["notes"], let bSide = wire.b else { Issue.record("no link"); return }
        var forged = bDocument.text
        forged.replica = ReplicaID(4545)
        let first = forged.replace(3..<3, with: Array("<C3>".unicodeScalars))
        var other = bDocument.text
        other.replica = ReplicaID(4545)
        let second = other.replace(0..<0, with: Array("<X9>".unicodeScalars))   // the same IDs, other characters
        bSide.sendOperations(first + second, of: bDocument)
        net.pump([a, b])
        #expect(wire.a?.state == .closed && wire.a?.closeReason?.contains("same batch") == true, "\(String(describing: wire.a?.closeReason))")
        #expect(Self.text(a) == "abc", "nothing of the frame was applied")
    }

    @Test func anInsertionAnchoredToANewerElementOfItsBatchIsRefusedWhole() throws {
        let (net, a, b, ann, wire) = try PeerSyncTests.linkedWithNotes(400)
        defer { _ = ann }
        guard let bDocument = b.documents["notes"], let bSide = wire.b else { Issue.record("no link"); return }
        let anchor = ReplicatingArrayInsertion<Unicode.Scalar>(id: ElementID(replica: ReplicaID(4646), counter: 0), lamport: 50,
                                                               anchor: nil, content: .elements(["<"]))
        let late = ReplicatingArrayInsertion<Unicode.Scalar>(id: ElementID(replica: ReplicaID(4747), counter: 0), lamport: 40,
                                                             anchor: ElementID(replica: ReplicaID(4646), counter: 0), content: .elements([">"]))
        bSide.sendOperations([.insert(anchor), .insert(late)], of: bDocument)
        net.pump([a, b])
        #expect(wire.a?.state == .closed && wire.a?.closeReason?.contains("not after its anchor") == true, "\(String(describing: wire.a?.closeReason))")
        #expect(Self.text(a) == "abc")
    }
}
