import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import QuireTestSupport

/// Cursors, selections and names across daemons: placed in each receiver's view, relayed along
/// a chain, cleared when the editor or a link goes, and bounded like everything a peer sends.
@Suite struct PeerPresenceTests {
    /// Daemons a - b - c in a chain (a and c never meet), Ann on a and Cy on c with "notes" open.
    static func chain() throws -> (PeerTestNetwork, [Daemon], TestEditor, TestEditor, PeerTestNetwork.Wire) {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200), c = net.makeDaemon(300)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "hello world\n")
        let ab = try net.link(a, b)
        try net.link(b, c)
        net.pump([a, b, c])
        let cy = TestEditor(daemon: c)
        cy.initialize(user: "cy")
        cy.open("notes", text: "")
        #expect(cy.string == "hello world\n")
        return (net, [a, b, c], ann, cy, ab)
    }

    static func moveCursor(_ editor: TestEditor, to offset: Int, selectingFrom start: Int? = nil) {
        editor.notify("cursor/update", ["uri": "notes", "epoch": .integer(Int64(editor.epoch)), "revision": .integer(Int64(editor.daemonRevision)),
                                        "selections": [["start": editor.position(of: start ?? offset), "end": editor.position(of: offset)]]])
    }

    @Test func aCursorCrossesAChainWithItsNameAndStaysOnItsCharacter() throws {
        let (net, daemons, ann, cy, _) = try Self.chain()
        Self.moveCursor(ann, to: 6, selectingFrom: 0)   // "hello " selected, cursor before "world"
        net.pump(daemons)
        var update = cy.take("cursor/update").last?["params"]
        #expect(update?["user"]?["name"] == "ann")
        #expect(update?["selections"] == [["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 6]]])
        // Cy types before Ann's cursor; the next update from Ann is placed in Cy's new text.
        cy.edit(0..<0, with: ">> ")
        net.pump(daemons)
        ann.deliver()
        #expect(ann.string == ">> hello world\n")
        Self.moveCursor(ann, to: 9)   // still before "world"
        net.pump(daemons)
        update = cy.take("cursor/update").last?["params"]
        #expect(update?["selections"] == [["start": ["line": 0, "character": 9], "end": ["line": 0, "character": 9]]])
        // Someone opening the document later sees Ann where she is.
        let dee = TestEditor(daemon: daemons[2])
        dee.initialize(user: "dee")
        dee.open("notes", text: "")
        #expect(dee.take("cursor/update").contains { $0["params"]?["user"]?["name"] == "ann" })
    }

    @Test func presenceGoesWhenTheEditorLeavesOrTheLinkDrops() throws {
        let (net, daemons, ann, cy, ab) = try Self.chain()
        Self.moveCursor(ann, to: 3)
        net.pump(daemons)
        let session = cy.take("cursor/update").last?["params"]?["session"]
        #expect(session != nil)
        ann.request("document/close", ["uri": "notes"])
        net.pump(daemons)
        var gone = cy.take("cursor/update").last?["params"]
        #expect(gone?["session"] == session && gone?["selections"] == [], "Ann closed the document: her cursor went")
        // Back, then her daemon's link drops: b clears her for c too.
        ann.open("notes", text: "")
        Self.moveCursor(ann, to: 2)
        net.pump(daemons)
        #expect(cy.take("cursor/update").last?["params"]?["selections"] != [])
        net.sever(ab)
        net.pump(daemons)
        gone = cy.take("cursor/update").last?["params"]
        #expect(gone?["selections"] == [], "the link Ann's cursor came by dropped")
    }

    /// A daemon started without --user-name is shown to peers by its editor's name, not the
    /// login name.
    @Test func peersSeeTheEditorsNameForADaemonWithoutOne() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100, user: "login"), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "Ann Lee")
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        try net.link(a, b)
        net.pump([a, b])
        #expect(bob.take("peer/changed").first?["params"]?["user"] == "Ann Lee")
    }

    @Test func malformedOrOversizedPresenceCutsTheLink() throws {
        let (net, daemons, _, _, ab) = try Self.chain()
        guard let document = daemons[0].documents["notes"] else { Issue.record("no document"); return }
        let many = JSONValue.array(Array(repeating: ["start", "start"], count: PresenceMessage.maximumSelections + 1))
        ab.b?.send(.presence(["uri": "notes", "id": .string(String(document.id)), "origin": "5:1", "sequence": "1",
                              "user": ["name": "x"], "selections": many]))
        net.pump(daemons)
        #expect(ab.a?.state == .closed)
        #expect(ab.a?.closeReason?.contains("exceeds the limit of 64") == true, "\(String(describing: ab.a?.closeReason))")
        #expect(PresenceMessage.isColor("#a0B1c2") && !PresenceMessage.isColor("red") && !PresenceMessage.isColor("#12345"))
    }
}
