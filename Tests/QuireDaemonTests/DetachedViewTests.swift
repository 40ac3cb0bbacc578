import Foundation
import JSON
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// A kept view whose elements a stability round drops keeps its texts: its editor's reopen,
/// with no base of the client's own, merges what it typed meanwhile as text against exactly
/// what it showed, before and after a restart (protocol/decisions/durable-views.md). Before,
/// the view was dropped and such a reopen was refused with -32017 (the chaos test's seed 22).
@Suite struct DetachedViewTests {
    /// Ann on A and bob on B share "hello world!"; ann's editor goes away without closing; bob
    /// removes "world"; a round drops it on A, where ann's kept view still shows it. Ann typed
    /// `<A9>` meanwhile.
    static func annAwayWhileARoundDropsWhatHerViewShows(_ a: Daemon, _ b: Daemon, _ network: PeerTestNetwork) throws -> TestEditor {
        let (ann, bob) = try TombstoneCompactionTests.pairedEditors(a, b, network)
        ann.edit(0..<0, with: "hello world!\n")
        network.pump([a, b])
        bob.deliver()
        ann.connection.endOfInput()
        ann.disconnect()
        bob.edit(6..<11, with: "")
        network.pump([a, b])
        let document = try #require(a.document("doc"))
        // With a store, every snapshot starts a round too: one may be under way already.
        for _ in 0..<3 where document.text.scalars.tombstoneCount > 0 {
            _ = a.startStabilityRound(document)
            network.pump([a, b])
        }
        #expect(document.text.scalars.tombstoneCount == 0, "the round dropped \"world\" on A")
        #expect(a.dormantViews.views(of: document.id).isEmpty && a.dormantViews.detachedViews(of: document.id).count == 1)
        ann.text.insert(contentsOf: Array("<A9>".unicodeScalars), at: 12)
        return ann
    }

    static func reopenWithoutBase(_ ann: TestEditor, on daemon: Daemon) -> JSONValue {
        ann.connect(to: daemon)
        ann.initialize(user: "ann")
        return ann.reopen()
    }

    @Test func aReopenOfADetachedViewMergesItsTypingAsText() throws {
        let a = TombstoneCompactionTests.makeDaemon(2100), b = TombstoneCompactionTests.makeDaemon(2200)
        let network = PeerTestNetwork()
        let ann = try Self.annAwayWhileARoundDropsWhatHerViewShows(a, b, network)
        let reply = Self.reopenWithoutBase(ann, on: a)
        #expect(reply["error"] == nil, "\(reply)")
        #expect(a.document("doc")?.text.string == "hello !<A9>\n")
        #expect(ann.string == "hello !<A9>\n")
        #expect(a.dormantViews.detachedViews(of: try #require(a.document("doc")).id).isEmpty, "taken once")
        network.pump([a, b])
        #expect(b.document("doc")?.text.string == "hello !<A9>\n")
    }

    @Test func aDetachedViewSurvivesARestart() throws {
        let data = DaemonProcess.temporaryDirectory("detached-view")
        let ann: TestEditor
        do {
            let a = TombstoneCompactionTests.makeDaemon(2300, store: try TombstoneCompactionTests.store(data))
            let b = TombstoneCompactionTests.makeDaemon(2400)
            let network = PeerTestNetwork()
            ann = try Self.annAwayWhileARoundDropsWhatHerViewShows(a, b, network)
            a.commit()
        }
        let a = TombstoneCompactionTests.makeDaemon(2500, store: try TombstoneCompactionTests.store(data))
        let document = try #require(a.document("doc"))
        #expect(a.dormantViews.detachedViews(of: document.id).count == 1, "the log and the snapshots keep it")
        let reply = Self.reopenWithoutBase(ann, on: a)
        #expect(reply["error"] == nil, "\(reply)")
        #expect(document.text.string == "hello !<A9>\n" && ann.string == document.text.string)
    }

    /// A reopen at a revision the detached view never showed has nothing to merge against: the
    /// open rules apply (-32017, nothing changed).
    @Test func aReopenAtAnotherEpochIsRefusedAndChangesNothing() throws {
        let a = TombstoneCompactionTests.makeDaemon(2600), b = TombstoneCompactionTests.makeDaemon(2700)
        let network = PeerTestNetwork()
        let ann = try Self.annAwayWhileARoundDropsWhatHerViewShows(a, b, network)
        ann.epoch += 1
        let reply = Self.reopenWithoutBase(ann, on: a)
        #expect(reply["error"]?["code"] == -32017, "\(reply)")
        #expect(a.document("doc")?.text.string == "hello !\n")
    }

    @Test func aDetachedViewStateRoundTripsAndDamageIsAnError() throws {
        let view = DetachedView(id: "v1", epoch: 3, texts: [4: "a\n", 5: "ab\n"])
        #expect(try DetachedView(decodingState: view.encodedState()) == view)
        var bytes = view.encodedState()
        bytes.removeLast()
        #expect(throws: BinaryDecodingError.self) { try DetachedView(decodingState: bytes) }
        #expect(throws: BinaryDecodingError.self) { try DetachedView(decodingState: view.encodedState() + [0]) }
    }
}

/// A view's saved state holds what its copies hold, operations still waiting for an element that
/// is on its way included (a peer's catch-up can deliver one before what it follows, and the
/// editor may confirm the daemon edit it rode along with). Such a state was unreadable after a
/// restart, and the editor's reopen refused (the chaos test at 800 steps, seeds 102 and 104).
@Suite struct ViewStateTests {
    @Test func aViewWhoseCopyWaitsForAnElementReadsBack() throws {
        var origin = ReplicatingText("ab\n", replica: ReplicaID(1))
        var copy = origin
        let first = origin.replace(2..<2, with: Array("<Y1>".unicodeScalars))
        let second = origin.replace(6..<6, with: Array(" f(x)".unicodeScalars))
        for op in second { copy.integrate(op) }
        let view = EditorView(id: "v1", uri: "doc", text: copy, replica: ReplicaID(9), encoding: .utf32)
        view.enqueue(first)
        let restored = try EditorView(decodingState: view.encodedState(), uri: "doc", replica: ReplicaID(9))
        #expect(restored.confirmed.scalars.pendingOperationCount == 1)
        _ = restored.makeDaemonEdit(hashLimit: 1 << 20)
        #expect(restored.sent.string == "ab<Y1> f(x)\n")
    }
}
