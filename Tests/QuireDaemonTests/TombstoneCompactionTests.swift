import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes

/// Dropping tombstones on a daemon: only what no copy on it can refer to, only while no peer
/// holds the document; a compacted document reaches peers whole and keeps converging.
@Suite struct TombstoneCompactionTests {
    static func makeDaemon(_ base: UInt64, store: DocumentStore? = nil) -> Daemon {
        var next = base
        var random = SeededGenerator(seed: base)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return Daemon(configuration: Daemon.Configuration(peerSecret: Array("s3cret".utf8)), logger: logger,
                      replicaSource: { next += 1; return ReplicaID(next) },
                      randomBytes: { n in (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) } },
                      store: store)
    }

    static func store(_ path: String) throws -> DocumentStore {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try DocumentStore(path: path, snapshotLogBytes: 1, logger: logger)
    }

    /// Bob types and deletes, then closes; Ann, who saw it all, types on: every removed character
    /// is then referred to by nothing.
    static func typeAndDelete(on daemon: Daemon) -> (ann: TestEditor, bob: TestEditor) {
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "")
        bob.open("doc", text: "")
        bob.edit(0..<0, with: "the quick brown fox\njumps over\nthe lazy dog\n")
        bob.edit(4..<10, with: "")                  // "quick "
        bob.edit(14..<20, with: "")                 // "jumps " after the first removal
        #expect(bob.request("document/close", ["uri": "doc"])["result"] != nil)
        ann.deliver()
        ann.edit(0..<0, with: ">")
        // Enough typed for the log to pass its last snapshot's size: a snapshot is due again.
        ann.edit(1..<1, with: String(repeating: "typed on and on ", count: 20))
        return (ann, bob)
    }

    @Test func anUnsharedDocumentDropsItsTombstonesAtASnapshotAndReloadsThem() throws {
        let data = DaemonProcess.temporaryDirectory("compaction-data")
        let expected: String
        do {
            let daemon = Self.makeDaemon(100, store: try Self.store(data))
            let (ann, bob) = Self.typeAndDelete(on: daemon)
            expected = ann.string
            _ = bob
            let text = try #require(daemon.document("doc")).text.scalars
            #expect(text.compactedCount == 12 && text.tombstoneCount == 0, "snapshots (due after every read here) dropped the removed characters")
            #expect(String(String.UnicodeScalarView(text.elements)) == expected)
        }
        let daemon = Self.makeDaemon(200, store: try Self.store(data))
        let text = try #require(daemon.document("doc")).text
        #expect(text.string == expected && text.scalars.compactedCount == 12)
        let carol = TestEditor(daemon: daemon)
        carol.initialize(user: "carol")
        carol.open("doc", text: "")
        carol.edit(1..<1, with: "ok ")
        #expect(try #require(daemon.document("doc")).text.string == ">ok " + expected.dropFirst(), "\(carol.string)")
    }

    @Test func aLaggingViewKeepsWhatItStillShowsUntilItCatchesUp() throws {
        let daemon = Self.makeDaemon(300)
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "")
        bob.open("doc", text: "")
        ann.edit(0..<0, with: "hello world")
        bob.deliver()
        bob.edit(11..<11, with: "!")                // bob confirms "hello world"
        ann.deliver()
        ann.edit(6..<11, with: "")                  // ann removes "world"; bob has not seen it
        #expect(ann.request("document/close", ["uri": "doc"])["result"] != nil)
        let document = try #require(daemon.document("doc"))
        daemon.dropTombstones(of: document)
        #expect(document.text.scalars.tombstoneCount == 5, "bob's view still shows \"world\"")
        // Bob types inside the word he still sees: anchored to a removed character, placed fine.
        bob.edit(8..<8, with: "X")
        #expect(document.text.string == "hello X!" && document.text.scalars.rejectedOperationCount == 0)
        bob.deliver()
        #expect(bob.string == "hello X!")
        bob.edit(7..<7, with: "Y")                  // based on everything: bob's view caught up
        daemon.dropTombstones(of: document)
        #expect(document.text.scalars.tombstoneCount == 0 && document.text.string == "hello XY!")
    }

    @Test func undoStillRestoresTextRemovedBeforeACompaction() throws {
        let daemon = Self.makeDaemon(400)
        let (ann, bob) = UndoTests.editors(on: daemon)
        UndoTests.edit(ann, 0..<0, "keep this", group: 1)
        UndoTests.edit(ann, 4..<9, "", group: 2)   // "keep"
        bob.deliver()
        bob.edit(4..<4, with: "!")
        let document = try #require(daemon.document("doc"))
        daemon.dropTombstones(of: document)
        #expect(document.text.scalars.tombstoneCount == 5, "ann's undo history refers to them")
        ann.deliver()
        #expect(UndoTests.undo(ann) == true)
        bob.deliver()
        #expect(ann.string == bob.string && ann.string.contains(" this") && ann.string.hasPrefix("keep"))
    }

    @Test func aCompactedDocumentReachesPeersWholeAndKeepsConverging() throws {
        let data = DaemonProcess.temporaryDirectory("compaction-peer")
        let a = Self.makeDaemon(500)
        let editors = Self.typeAndDelete(on: a)
        defer { _ = editors }
        let document = try #require(a.document("doc"))
        a.dropTombstones(of: document)
        #expect(document.text.scalars.compactedCount == 12 && !document.everShared)
        let network = PeerTestNetwork()
        let b = Self.makeDaemon(600, store: try Self.store(data))
        let c = Self.makeDaemon(700)
        try network.link(a, b)
        network.pump([a, b])
        let copy = try #require(b.document("doc"))
        #expect(copy.text.string == document.text.string && copy.text.scalars.compactedCount == 12)
        #expect(document.everShared && copy.everShared, "a shared document drops no more tombstones on its own")
        // B passes it on whole to C, and all three edit on.
        let wire = try network.link(b, c)
        network.pump([a, b, c])
        #expect(wire.a?.closeReason == nil && wire.b?.closeReason == nil, "\(String(describing: wire.a?.closeReason)) \(String(describing: wire.b?.closeReason))")
        #expect(c.document("doc")?.text.string == copy.text.string, "\(c.documents.keys)")
        let ann = TestEditor(daemon: a), bea = TestEditor(daemon: b), cid = TestEditor(daemon: c)
        for (editor, user) in [(ann, "ann"), (bea, "bea"), (cid, "cid")] {
            editor.initialize(user: user)
            editor.open("doc", text: "")
        }
        ann.edit(0..<0, with: "A")
        bea.edit(5..<5, with: "B")
        cid.edit(cid.text.count..<cid.text.count, with: "C")
        network.pump([a, b, c])
        for editor in [ann, bea, cid] { editor.deliver() }
        #expect(ann.string == bea.string && bea.string == cid.string && ann.string.contains("A") && ann.string.contains("C"),
                "\(ann.string.debugDescription) \(bea.string.debugDescription) \(cid.string.debugDescription)")
        for daemon in [a, b, c] {
            #expect(try #require(daemon.document("doc")).text.scalars.rejectedOperationCount == 0)
        }
    }

    @Test func aDocumentTakenWholeSurvivesARestart() throws {
        let data = DaemonProcess.temporaryDirectory("compaction-taken")
        let expected: String
        do {
            let a = Self.makeDaemon(900)
            let editors = Self.typeAndDelete(on: a)
        defer { _ = editors }
            let document = try #require(a.document("doc"))
            a.dropTombstones(of: document)
            expected = document.text.string
            let network = PeerTestNetwork()
            let b = Self.makeDaemon(1000, store: try Self.store(data))
            try network.link(a, b)
            network.pump([a, b])
            #expect(try #require(b.document("doc")).text.string == expected)
        }
        let b = Self.makeDaemon(1100, store: try Self.store(data))
        let copy = try #require(b.document("doc"))
        #expect(copy.text.string == expected && copy.text.scalars.compactedCount == 12 && copy.everShared)
    }

    @Test func aDocumentAPeerHoldsKeepsItsTombstones() throws {
        let data = DaemonProcess.temporaryDirectory("compaction-shared")
        let a = Self.makeDaemon(1200, store: try Self.store(data))
        let b = Self.makeDaemon(1300)
        let network = PeerTestNetwork()
        try network.link(a, b)
        network.pump([a, b])
        let editors = Self.typeAndDelete(on: a)
        defer { _ = editors }
        network.pump([a, b])
        let document = try #require(a.document("doc"))
        #expect(document.everShared && document.text.scalars.compactedCount == 0 && document.text.scalars.tombstoneCount == 12,
                "until peers agree on what is stable, a shared document's snapshots keep every tombstone")
        #expect(try #require(b.document("doc")).text.string == document.text.string)
    }
}
