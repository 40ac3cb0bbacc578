import QuireTestSupport
import Foundation
import JSON
import Testing
@testable import QuireDaemon

/// `ReopenWaits` in process, with the event loop's timers run by hand: a held reopen is
/// answered once the configured peer's link caught up, with the editor's later message about
/// that document handled after it and a request about something else answered at once; with no
/// peer, the reopen goes when its time is up (protocol/decisions/reopen-catch-up.md).
@Suite struct ReopenWaitsTests {
    /// Timers run when the test says so; `now` is the daemon's monotonic clock.
    final class ManualLoop {
        var now = 1_000.0
        var timers: [(at: Double, work: () -> Void)] = []
        func schedule(_ seconds: Double, _ work: @escaping () -> Void) { timers.append((now + seconds, work)) }
        /// Runs the timers due by `now`.
        func runDue() {
            let due = timers.filter { $0.at <= now }
            timers.removeAll { $0.at <= now }
            for timer in due { timer.work() }
        }
    }

    /// Ann shares "doc" from A with B and goes away; A restarts (from its data directory) set to
    /// wait for one peer; bob types on B meanwhile. Returns the restarted A, B, the network and ann.
    static func restartedWhileBobTyped(_ path: String, loop: ManualLoop) throws -> (Daemon, Daemon, PeerTestNetwork, TestEditor) {
        let network = PeerTestNetwork()
        let b = network.makeDaemon(97_000)
        let ann: TestEditor
        do {
            let a = network.makeDaemon(9_000, store: try TombstoneCompactionTests.store(path))
            try network.link(a, b)
            ann = TestEditor(daemon: a)
            ann.initialize(user: "ann")
            ann.open("doc", text: "hello\n")
            network.pump([a, b])
            ann.connection.endOfInput()
            ann.disconnect()
            for link in b.links.values { link.close("the peer went away") }
            for link in a.links.values { link.close("shutting down") }
        }
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("doc", text: "hello\n")
        bob.edit(0..<0, with: "<B1>\n")
        let a = network.makeDaemon(9_100, store: try TombstoneCompactionTests.store(path))
        a.monotonicClock = { loop.now }
        a.waitForPeersBeforeReopens(configuredPeers: 1) { loop.schedule($0, $1) }
        ann.connect(to: a)
        ann.initialize(user: "ann")
        return (a, b, network, ann)
    }

    @Test func aHeldReopenIsAnsweredOnceThePeerCaughtUp() throws {
        let loop = ManualLoop()
        let (a, b, network, ann) = try Self.restartedWhileBobTyped(DaemonProcess.temporaryDirectory("reopen-waits"), loop: loop)
        ann.text.append(contentsOf: Array("<A-off>\n".unicodeScalars))
        #expect(ann.reopen() == .null, "held: no reply yet")
        // A later message about the same document waits behind the reopen; others do not.
        ann.notify("cursor/update", ["uri": "doc", "epoch": 1, "revision": 0, "selections": []])
        #expect(ann.request("quire/status")["result"] != nil, "another request is answered meanwhile")
        try network.link(a, b)
        network.pump([a, b])
        loop.runDue()
        ann.collect()
        let reply = try #require(ann.inbox.first { $0["id"] != nil && $0["result"]?["view"] != nil }, "answered after the catch-up")
        let changes = reply["result"]?["changes"]?.arrayValue ?? []
        #expect(changes.contains { $0["text"]?.stringValue?.contains("<B1>") == true }, "the reply brings bob's line: \(reply)")
        #expect(a.document("doc")?.text.string == "<B1>\nhello\n<A-off>\n")
        #expect(a.reopenWaits.held.isEmpty, "the cursor message went with it")
    }

    @Test func withNoPeerTheReopenGoesWhenItsTimeIsUp() throws {
        let loop = ManualLoop()
        let (a, _, _, ann) = try Self.restartedWhileBobTyped(DaemonProcess.temporaryDirectory("reopen-waits-alone"), loop: loop)
        #expect(ann.reopen() == .null, "held: no reply yet")
        loop.now += a.configuration.reopenCatchUpWait / 2
        loop.runDue()
        ann.collect()
        #expect(!ann.inbox.contains { $0["result"]?["view"] != nil }, "not before the bound")
        loop.now += a.configuration.reopenCatchUpWait
        loop.runDue()
        ann.collect()
        #expect(ann.inbox.contains { $0["result"]?["view"] != nil }, "answered at the bound")
        #expect(a.document("doc")?.text.string == "hello\n")
    }
}
