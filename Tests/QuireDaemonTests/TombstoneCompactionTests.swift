import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Dropping tombstones on a daemon: only what no copy on it can refer to, only while no peer
/// holds the document; a compacted document reaches peers whole and keeps converging.
@Suite struct TombstoneCompactionTests {
    static func makeDaemon(_ base: UInt64, store: DocumentStore? = nil) -> Daemon {
        PeerTestNetwork().makeDaemon(base, store: store)
    }

    /// An editor of `user` on `daemon` with "doc" open.
    static func editor(_ user: String, on daemon: Daemon) -> TestEditor {
        let editor = TestEditor(daemon: daemon)
        editor.initialize(user: user)
        editor.open("doc", text: "")
        return editor
    }

    static func store(_ path: String) throws -> DocumentStore {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try DocumentStore(path: path, snapshotLogBytes: 1, logger: logger)
    }

    /// Bob types and deletes, then closes; Ann, who saw it all, types on: every removed character
    /// is then referred to by nothing.
    static func typeAndDelete(on daemon: Daemon) -> (ann: TestEditor, bob: TestEditor) {
        let ann = Self.editor("ann", on: daemon), bob = Self.editor("bob", on: daemon)
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
        let carol = Self.editor("carol", on: daemon)
        carol.edit(1..<1, with: "ok ")
        #expect(try #require(daemon.document("doc")).text.string == ">ok " + expected.dropFirst(), "\(carol.string)")
    }

    @Test func aLaggingViewKeepsWhatItStillShowsUntilItCatchesUp() throws {
        let daemon = Self.makeDaemon(300)
        let ann = Self.editor("ann", on: daemon), bob = Self.editor("bob", on: daemon)
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
        let ann = Self.editor("ann", on: a), bea = Self.editor("bea", on: b), cid = Self.editor("cid", on: c)
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

    /// Two daemons linked, each with an editor on "doc" that has seen everything typed so far.
    static func pairedEditors(_ a: Daemon, _ b: Daemon, _ network: PeerTestNetwork) throws -> (TestEditor, TestEditor) {
        try network.link(a, b)
        network.pump([a, b])
        let ann = Self.editor("ann", on: a)
        network.pump([a, b])
        return (ann, Self.editor("bob", on: b))
    }

    /// Paired editors; ann types `text`, bob confirms it by typing `confirmation` at its end, then
    /// ann removes `removed`, which B gets and bob's editor is not given yet.
    static func removalBobHasNotSeen(_ a: Daemon, _ b: Daemon, _ network: PeerTestNetwork, typed text: String,
                                     confirmedWith confirmation: String, removing removed: Range<Int>) throws -> (ann: TestEditor, bob: TestEditor) {
        let (ann, bob) = try pairedEditors(a, b, network)
        ann.edit(0..<0, with: text)
        network.pump([a, b])
        bob.deliver()
        let end = text.unicodeScalars.count
        bob.edit(end..<end, with: confirmation)
        network.pump([a, b])
        ann.deliver()
        ann.edit(removed, with: "")
        return (ann, bob)
    }

    static func text(_ daemon: Daemon) -> ReplicatingArray<Unicode.Scalar>? { daemon.document("doc")?.text.scalars }

    /// The document's entry in `peer/status`, as `editor` asks for it.
    static func sharingStatus(_ editor: TestEditor) -> JSONValue? {
        editor.request("peer/status")["result"]?["documents"]?.arrayValue?.first { $0["uri"] == "doc" }
    }

    @Test func aStabilityRoundDropsWhatEveryHolderHasSeenRemoved() throws {
        let data = DaemonProcess.temporaryDirectory("compaction-shared")
        let a = Self.makeDaemon(1200, store: try Self.store(data)), b = Self.makeDaemon(1300)
        let network = PeerTestNetwork()
        let (ann, bob) = try Self.pairedEditors(a, b, network)
        ann.edit(0..<0, with: "the quick brown fox jumps\n")
        network.pump([a, b])
        bob.deliver()
        bob.edit(4..<10, with: "")                       // "quick "
        network.pump([a, b])
        ann.deliver()
        // Enough typed for a snapshot: it starts a round, which reaches B and comes back.
        ann.edit(0..<0, with: String(repeating: "more text ", count: 30))
        network.pump([a, b])
        #expect(try #require(Self.text(a)).compactedCount == 6 && Self.text(a)?.tombstoneCount == 0)
        #expect(Self.text(b)?.tombstoneCount == 6, "B keeps its tombstones until it runs a round of its own")
        #expect(b.startStabilityRound(try #require(b.document("doc"))))
        network.pump([a, b])
        #expect(Self.text(b)?.tombstoneCount == 6, "bob may still undo his removal: B keeps what he would put back")
        // Editing goes on from both sides.
        bob.deliver()
        let afterThe = bob.text.count - " brown fox jumps\n".unicodeScalars.count
        bob.edit(afterThe..<afterThe, with: "!")
        ann.edit(ann.text.count..<ann.text.count, with: "end")
        network.pump([a, b])
        ann.deliver()
        bob.deliver()
        #expect(ann.string == bob.string && ann.string.hasSuffix("the! brown fox jumps\nend"))
        #expect(Self.text(a)?.rejectedOperationCount == 0 && Self.text(b)?.rejectedOperationCount == 0)
    }

    @Test func aLaggingViewOnAPeerHoldsTheRoundBackUntilItCatchesUp() throws {
        let a = Self.makeDaemon(1400), b = Self.makeDaemon(1500)
        let network = PeerTestNetwork()
        let (ann, bob) = try Self.removalBobHasNotSeen(a, b, network, typed: "hello world", confirmedWith: "!", removing: 6..<11)
        #expect(ann.request("document/close", ["uri": "doc"])["result"] != nil)   // nor can ann undo it
        network.pump([a, b])
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        network.pump([a, b])
        #expect(document.text.scalars.tombstoneCount == 5, "bob's view still shows \"world\"")
        let waiting = try #require(Self.sharingStatus(ann))
        #expect(waiting["roundsUnderWay"] == 1 && waiting["tombstones"] == 5 && waiting["dropped"] == 0, "\(waiting)")
        // Bob types inside the word he still sees: anchored to a removed character, placed everywhere.
        bob.edit(8..<8, with: "X")
        network.pump([a, b])
        #expect(document.text.string == "hello X!" && document.text.scalars.rejectedOperationCount == 0)
        bob.deliver()
        bob.edit(7..<7, with: "Y")                       // based on everything: bob's view caught up
        network.pump([a, b])
        #expect(document.text.scalars.tombstoneCount == 0 && document.text.string == "hello XY!")
        let done = try #require(Self.sharingStatus(ann))
        #expect(done["roundsUnderWay"] == 0 && done["tombstones"] == 0 && done["dropped"] == 5, "\(done)")
        #expect(try #require(b.document("doc")).text.string == "hello XY!")
    }

    @Test func aRoundGivesUpOnAViewThatNeverCatchesUp() throws {
        let a = Self.makeDaemon(1600), b = Self.makeDaemon(1700)
        let network = PeerTestNetwork()
        let (_, bob) = try Self.removalBobHasNotSeen(a, b, network, typed: "abcdef", confirmedWith: "g", removing: 1..<3)
        network.pump([a, b])
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        for _ in 0...StabilityRounds.patienceTicks { b.tickStabilityRounds(); network.pump([a, b]) }
        #expect(a.stabilityRounds.active.isEmpty && document.text.scalars.tombstoneCount == 2, "the round failed; nothing dropped")
        #expect(a.startStabilityRound(document), "a new round may start")
        _ = bob
    }

    @Test func aHolderThatIsAwayHoldsTheRoundBack() throws {
        let a = Self.makeDaemon(1800), b = Self.makeDaemon(1900), c = Self.makeDaemon(2000)
        let network = PeerTestNetwork()
        let (ann, bob) = try Self.pairedEditors(a, b, network)
        let toC = try network.link(a, c)
        network.pump([a, b, c])
        ann.edit(0..<0, with: "abcdef")
        network.pump([a, b, c])
        bob.deliver()
        bob.edit(1..<3, with: "")                        // removed on B: A's undo histories know nothing of it
        network.pump([a, b, c])
        ann.deliver()
        ann.edit(0..<0, with: ">")                       // ann's view has caught up with the removal
        network.pump([a, b, c])
        network.sever(toC)
        network.pump([a, b, c])
        let document = try #require(a.document("doc"))
        #expect(document.sharing.holders.count == 2)
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.tombstoneCount == 2, "C holds the document and was not reached")
        // What a person asks when tombstones are not going away: who holds the document, and since when.
        let status = try #require(Self.sharingStatus(ann))
        let holders = status["holders"]?.arrayValue?.compactMap { $0["replica"]?.stringValue } ?? []
        #expect(Set(holders) == [b.replica.description, c.replica.description], "\(status)")
        #expect(status["holders"]?.arrayValue?.allSatisfy { ($0["lastLinked"]?.integerValue ?? 0) > 0 } == true)
        #expect(status["retired"] == [] && status["roundsUnderWay"] == 0 && status["tombstones"] == 2 && status["dropped"] == 0)
        try network.link(a, c)
        network.pump([a, b, c])
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.tombstoneCount == 0)
    }

    @Test func aRoundCrossesAChainAndAMeshAndEditingConverges() throws {
        let a = Self.makeDaemon(2100), b = Self.makeDaemon(2200), c = Self.makeDaemon(2300)
        let network = PeerTestNetwork()
        let (ann, bob) = try Self.pairedEditors(a, b, network)
        try network.link(b, c)
        network.pump([a, b, c])
        let cid = Self.editor("cid", on: c)
        ann.edit(0..<0, with: "one two three four\n")
        network.pump([a, b, c])
        for editor in [bob, cid] { editor.deliver() }
        cid.edit(4..<8, with: "")                        // "two "
        bob.edit(0..<0, with: ">")
        network.pump([a, b, c])
        for editor in [ann, bob, cid] { editor.deliver() }
        ann.edit(ann.text.count..<ann.text.count, with: ".")
        bob.edit(bob.text.count..<bob.text.count, with: ".")
        cid.edit(cid.text.count..<cid.text.count, with: ".")
        network.pump([a, b, c])
        for editor in [ann, bob, cid] { editor.deliver() }
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.tombstoneCount == 0 && document.text.scalars.compactedCount == 4, "the chain A-B-C was crossed")
        // A mesh: C links to A too; rounds from every daemon still finish.
        try network.link(a, c)
        network.pump([a, b, c])
        cid.edit(0..<1, with: "")
        network.pump([a, b, c])
        for editor in [ann, bob, cid] { editor.deliver() }
        for editor in [ann, bob, cid] { editor.edit(editor.text.count..<editor.text.count, with: "?") }
        network.pump([a, b, c])
        // Cid closes the document, so no undo history on C holds the removed text back either.
        #expect(cid.request("document/close", ["uri": "doc"])["result"] != nil)
        for (daemon, editor) in [(a, ann), (b, bob), (c, cid)] {
            editor.deliver()
            #expect(daemon.startStabilityRound(try #require(daemon.document("doc"))))
        }
        network.pump([a, b, c])
        for daemon in [a, b, c] {
            #expect(daemon.stabilityRounds.active.isEmpty)
            #expect(Self.text(daemon)?.tombstoneCount == 0 && Self.text(daemon)?.rejectedOperationCount == 0)
            #expect(daemon.document("doc")?.text.string == a.document("doc")?.text.string)
        }
        for editor in [ann, bob] { editor.deliver() }
        #expect(ann.string == bob.string && ann.string == a.document("doc")?.text.string)
    }

    @Test func aPeerFloodingAsksGetsFailuresNotMemory() throws {
        let a = Self.makeDaemon(2400), b = Self.makeDaemon(2500), c = Self.makeDaemon(2600)
        let network = PeerTestNetwork()
        let (ann, bob) = try Self.pairedEditors(a, b, network)
        defer { _ = (ann, bob) }
        try network.link(b, c)        // rounds that reach B wait for C's answer: they stay under way
        network.pump([a, b, c])
        let document = try #require(b.document("doc"))
        let fromA = try #require(network.wires.first?.b)
        for n in 0..<20 {
            b.receiveStability(["uri": "doc", "id": .string(String(document.id)), "round": .string("9:\(n)"), "phase": "ask"], from: fromA)
        }
        #expect(b.stabilityRounds.active.count == StabilityRounds.maximumActivePerDocument)
        b.receiveStability(["uri": "doc", "phase": "ask"], from: fromA)
        #expect(fromA.closeReason == "malformed stability message")
    }

    /// A settable wall clock shared by daemons.
    final class Clock: @unchecked Sendable {
        var now: Double = 1_800_000_000
        func advance(days: Double) { now += days * 24 * 3600 }
    }

    static func makeDaemon(_ base: UInt64, clock: Clock) -> Daemon {
        let daemon = makeDaemon(base)
        daemon.clock = { clock.now }
        return daemon
    }

    /// Three daemons on one clock: A and B paired, with Ann and Bob on "doc"; C linked to A or B
    /// while Ann types `text`, then cut off, a holder that may stay away.
    struct AwayHolder {
        let clock = Clock()
        let a: Daemon, b: Daemon, c: Daemon
        let network = PeerTestNetwork()
        let ann: TestEditor, bob: TestEditor

        init(base: UInt64, cLinkedToB: Bool = false, text: String) throws {
            a = TombstoneCompactionTests.makeDaemon(base, clock: clock)
            b = TombstoneCompactionTests.makeDaemon(base + 100, clock: clock)
            c = TombstoneCompactionTests.makeDaemon(base + 200, clock: clock)
            (ann, bob) = try TombstoneCompactionTests.pairedEditors(a, b, network)
            let toC = try network.link(cLinkedToB ? b : a, c)
            pump()
            ann.edit(0..<0, with: text)
            pump()
            network.sever(toC)
            pump()
        }

        func pump() { network.pump([a, b, c]) }
    }

    @Test func aHolderAwayPastTheHorizonIsRetiredAndRebasesWhenItReturns() throws {
        // C leaves for good, it seems, with the text as it was.
        let scene = try AwayHolder(base: 3000, text: "one two three four five\n")
        let (a, b, c, network, clock, ann, bob) = (scene.a, scene.b, scene.c, scene.network, scene.clock, scene.ann, scene.bob)
        bob.deliver()
        ann.deliver()
        clock.advance(days: 10)
        bob.edit(4..<8, with: "")                        // "two " removed on B
        network.pump([a, b, c])
        ann.deliver()
        ann.edit(0..<0, with: ">")
        network.pump([a, b, c])
        bob.deliver()
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.tombstoneCount == 4, "C was linked with 10 days ago: the round waits for it")
        // C, offline, types inside and right after the word the others removed.
        let cid = Self.editor("cid", on: c)
        cid.edit(6..<6, with: "[c1]")                    // inside "two"
        cid.edit(cid.text.count..<cid.text.count, with: "six\n")
        #expect(cid.request("document/close", ["uri": "doc"])["result"] != nil)
        #expect(c.document("doc")?.text.string == "one tw[c1]o three four five\nsix\n")
        clock.advance(days: 25)                          // 35 days since the link with C
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.sharing.retired.keys.contains(c.replica) && b.document("doc")?.sharing.retired.keys.contains(c.replica) == true,
                "every daemon the retiring round reached retired C before it answered")
        #expect(document.text.scalars.tombstoneCount == 0 && document.text.scalars.compactedCount == 4)
        // C comes back: it gets A's state, keeps its own work, and everything converges.
        let back = try network.link(c, a)
        network.pump([a, b, c])
        #expect(back.a?.closeReason == nil && back.b?.closeReason == nil, "\(String(describing: back.a?.closeReason)) \(String(describing: back.b?.closeReason))")
        #expect(document.sharing.retired.isEmpty, "C rebased: a holder again")
        let texts = [a, b, c].map { $0.document("doc")?.text.string ?? "" }
        #expect(texts[0] == texts[1] && texts[1] == texts[2], "\(texts)")
        #expect(texts[0].contains("[c1]") && texts[0].hasSuffix("six\n") && !texts[0].contains("two"), "C's offline text is all there: \(texts[0])")
        for daemon in [a, b, c] { #expect(Self.text(daemon)?.rejectedOperationCount == 0 && Self.text(daemon)?.pendingOperationCount == 0) }
        // Editing goes on everywhere.
        ann.deliver()
        ann.edit(0..<0, with: "!")
        network.pump([a, b, c])
        #expect(c.document("doc")?.text.string.hasPrefix("!") == true)
    }

    @Test func aRetiredHolderReturningToAnotherDaemonRebasesThereAndOnlyOnce() throws {
        let scene = try AwayHolder(base: 3300, cLinkedToB: true, text: "alpha beta gamma\n")
        let (a, b, c, network, clock, ann, bob) = (scene.a, scene.b, scene.c, scene.network, scene.clock, scene.ann, scene.bob)
        ann.deliver()
        ann.edit(6..<11, with: "")                       // "beta " removed
        network.pump([a, b, c])
        bob.deliver()
        bob.edit(0..<0, with: "#")
        network.pump([a, b, c])
        ann.deliver()
        #expect(ann.request("document/close", ["uri": "doc"])["result"] != nil)
        let cid = Self.editor("cid", on: c)
        cid.edit(cid.text.count..<cid.text.count, with: "delta\n")
        #expect(cid.request("document/close", ["uri": "doc"])["result"] != nil)
        clock.advance(days: 31)
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.compactedCount == 5, "C (known to B) was retired, and A dropped \"beta \"")
        // C returns to B, which retired it too; then meets A, which must not make it rebase again.
        try network.link(c, b)
        network.pump([a, b, c])
        try network.link(c, a)
        network.pump([a, b, c])
        let texts = [a, b, c].map { $0.document("doc")?.text.string ?? "" }
        #expect(texts[0] == texts[1] && texts[1] == texts[2], "\(texts)")
        #expect(texts[0].components(separatedBy: "delta").count == 2, "C's offline text once, not twice: \(texts[0])")
        _ = bob
    }

    @Test func aReturningHolderWithTheDocumentOpenRebasesOnceTheEditorClosesIt() throws {
        let scene = try AwayHolder(base: 3600, text: "red green blue\n")
        let (a, b, c, network, clock, ann, bob) = (scene.a, scene.b, scene.c, scene.network, scene.clock, scene.ann, scene.bob)
        ann.deliver()
        ann.edit(4..<10, with: "")                       // "green "
        #expect(ann.request("document/close", ["uri": "doc"])["result"] != nil)
        network.pump([a, b, c])
        bob.deliver()
        bob.edit(0..<0, with: "*")
        network.pump([a, b, c])
        let cid = Self.editor("cid", on: c)
        cid.edit(cid.text.count..<cid.text.count, with: "cyan\n")
        clock.advance(days: 40)
        let document = try #require(a.document("doc"))
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.compactedCount == 6)
        try network.link(c, a)
        network.pump([a, b, c])
        #expect(c.document("doc")?.text.string == "red green blue\ncyan\n", "kept apart while cid has it open")
        #expect(a.document("doc")?.text.string == "*red blue\n", "and nothing of it reached A")
        #expect(cid.request("document/close", ["uri": "doc"])["result"] != nil)
        network.pump([a, b, c])
        let texts = [a, b, c].map { $0.document("doc")?.text.string ?? "" }
        #expect(texts[0] == texts[1] && texts[1] == texts[2] && texts[0] == "*red blue\ncyan\n", "\(texts)")
    }

    @Test func aReturningHolderBoundToAFileRebasesWithoutWritingItsFile() throws {
        let clock = Clock()
        let a = Self.makeDaemon(3900, clock: clock), c = Self.makeDaemon(4000, clock: clock)
        let network = PeerTestNetwork()
        let toC = try network.link(a, c)
        network.pump([a, c])
        let ann = Self.editor("ann", on: a)
        ann.edit(0..<0, with: "north south\n")
        network.pump([a, c])
        // C binds the document to a file and saves it; then the link goes.
        let path = try FileBindingTests.file("north south\n")
        let cid = FileBindingTests.boundEditor(path, text: "north south\n", on: c)
        network.sever(toC)
        network.pump([a, c])
        ann.deliver()
        ann.edit(0..<6, with: "")                        // "north "
        #expect(ann.request("document/close", ["uri": "doc"])["result"] != nil)
        cid.edit(cid.text.count..<cid.text.count, with: "east\n")
        #expect(cid.request("document/save", ["uri": "doc"])["result"] != nil)
        #expect(cid.request("document/close", ["uri": "doc"])["result"] != nil)
        try "north south\neast\nwest\n".write(toFile: path, atomically: false, encoding: .utf8)   // outside Quire
        clock.advance(days: 40)
        let document = try #require(a.document("doc"))
        // A's only holder is C, away past the horizon: the round misses it and retires it.
        let b = Self.makeDaemon(4100, clock: clock)
        try network.link(a, b)
        network.pump([a, b, c])
        #expect(a.startStabilityRound(document))
        network.pump([a, b, c])
        #expect(document.text.scalars.compactedCount == 6)
        try network.link(c, a)
        network.pump([a, b, c])
        let texts = [a, b, c].map { $0.document("doc")?.text.string ?? "" }
        #expect(texts[0] == texts[1] && texts[1] == texts[2] && texts[0] == "south\neast\nwest\n", "\(texts)")
        // Peer traffic never writes files: C's file holds what was last saved there until C's
        // user saves, which writes the rebased text.
        #expect(FileBindingTests.read(path) == "north south\neast\nwest\n", "a rebase wrote C's file")
        let saver = FileBindingTests.boundEditor(path, text: texts[2], on: c)
        #expect(saver.request("document/save", ["uri": "doc"])["result"] != nil)
        #expect(FileBindingTests.read(path) == texts[0], "the save wrote the rebased text")
        #expect(c.document("doc")?.text.string == texts[0], "the save imported nothing twice")
    }
}

extension Daemon {
    /// A stability frame's content from `link`, decoded as the link decodes it (a malformed one cuts it).
    func receiveStability(_ json: JSONValue, from link: any PeerEndpoint) {
        do { stability.receive(try StabilityMessage(json: json), from: link) } catch { link.cut(error.description) }
    }
}
