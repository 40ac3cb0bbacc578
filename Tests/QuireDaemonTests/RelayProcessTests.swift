import EditingTraces
import Foundation
import JSON
import QuireRelay
import QuireTestSupport
import Testing

/// Real daemons that only dial a real `quire relay` (neither listens): they pair through it and
/// sync; what crosses the relay holds no typed text; a changed byte cuts the link and they pair
/// again; strangers, junk and slow senders at the relay do not keep the real pair apart; a
/// connection with no partner is told so and closed.
@Suite(.serialized) struct RelayProcessTests {
    /// A `quire relay` on a free loopback port with `arguments` as extra limits; returns it and the port.
    static func relay(_ arguments: [String] = []) throws -> (DaemonProcess, Int) {
        let relay = try DaemonProcess(arguments: ["relay", "--listen", "127.0.0.1:0"] + arguments)
        let line = relay.waitForLog(containing: "quire relay: listening on") ?? ""
        return (relay, Int(line.split(separator: ":").last ?? "") ?? 0)
    }

    /// A daemon whose only peering is dialing the relay at `port`, with an editor initialized.
    static func dialer(_ port: Int, user: String) throws -> (DaemonProcess, TestEditor) {
        let daemon = try DaemonProcess(arguments: ["--relay", "127.0.0.1:\(port)", "--user-name", user, "--log-level", "info"],
                                       environment: PeerProcessTests.secret)
        let editor = TestEditor(process: daemon)
        editor.initialize(user: user)
        return (daemon, editor)
    }

    static func occurrences(of needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Ann's editor opens the document; once Bob's daemon has it, Bob's editor opens it too and
    /// shows the text (the document may be listed before its text has arrived: it comes as edits).
    static func share(_ ann: TestEditor, _ bob: TestEditor, text: String) -> Bool {
        ann.open("doc", text: text)
        guard waitUntil({ bob.request("document/list")["result"]?.arrayValue?.contains { $0["uri"] == "doc" } ?? false }) else { return false }
        bob.open("doc", text: "")
        return PeerProcessTests.waitUntilConverged(ann, bob) && bob.string == text
    }

    static func stop(_ relay: DaemonProcess) {
        relay.process.terminate()
        _ = relay.waitForExit()
    }

    @Test func daemonsThatOnlyDialARelayPairEditAndConvergeAndTheRelaySeesNoText() throws {
        let (relay, port) = try Self.relay()
        #expect(port > 0)
        // Ann reaches the relay through a recorder: it sees every byte the relay sends and takes on her connection.
        let proxy = RecordingProxy(relayPort: port)
        defer { proxy.stop() }
        let (first, ann) = try Self.dialer(proxy.port, user: "annabelle")
        let (second, bob) = try Self.dialer(port, user: "bartholomew")
        let link = PeerLinkControlTests.waitForLink(bob, state: "established")
        #expect(link?["user"] == "annabelle", "bob's daemon linked with ann's through the relay")
        #expect(link?["encrypted"] == true)
        #expect(link?["address"]?.stringValue?.hasPrefix("relay 127.0.0.1:") == true, "\(String(describing: link))")
        #expect(PeerLinkControlTests.waitForLink(ann, state: "established")?["user"] == "bartholomew")
        #expect(Self.share(ann, bob, text: "the launch code is swordfish\n"))
        bob.edit(bob.text.count..<bob.text.count, with: "the vault opens at noon\n")
        ann.edit(0..<0, with: "classified: ")
        PeerProcessTests.typeAtRandom(ann, bob, seed: 22, steps: 60)
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        let captured = proxy.captured
        #expect(captured.count > 1000, "the recorder saw the link's bytes: \(captured.count)")
        for secret in ["swordfish", "vault", "classified", "launch", "noon", "annabelle", "bartholomew"] {
            #expect(PeerSecurityTests.contains([captured], secret) == false, "\(secret) crossed the relay in the clear")
        }
        #expect(relay.waitForLog(containing: "pair 1: ") != nil)
        #expect(!first.log.contains("Fatal") && !second.log.contains("Fatal"))
        PeerProcessTests.shutDown([ann, bob], [first, second])
        Self.stop(relay)
    }

    /// One byte changed between the relay and Ann after the link is up: Ann's daemon finds a frame
    /// that fails its integrity check, cuts the link, and both daemons dial the relay again, pair
    /// and sync what was typed meanwhile.
    @Test func aByteChangedInFlightCutsTheLinkAndTheDaemonsPairAgain() throws {
        let (relay, port) = try Self.relay()
        let proxy = RecordingProxy(relayPort: port)
        defer { proxy.stop() }
        let (first, ann) = try Self.dialer(proxy.port, user: "ann")
        let (second, bob) = try Self.dialer(port, user: "bob")
        #expect(PeerLinkControlTests.waitForLink(ann, state: "established") != nil)
        #expect(Self.share(ann, bob, text: "before\n"))
        proxy.armFlip()
        bob.edit(bob.text.count..<bob.text.count, with: "typed while a byte is changed\n")
        #expect(waitUntil { proxy.flips == 1 })
        #expect(first.waitForLog(containing: "integrity check") != nil, "ann's daemon refused the changed frame")
        #expect(waitUntil { Self.occurrences(of: "paired through the relay", in: first.log) >= 2 }, "ann dialed again and was paired")
        #expect(waitUntil { Self.occurrences(of: "paired through the relay", in: second.log) >= 2 }, "so did bob")
        #expect(proxy.connections >= 2)
        #expect(relay.waitForLog(containing: "pair 2: ") != nil)
        ann.edit(0..<0, with: "after the cut ")
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        #expect(bob.string.contains("typed while a byte is changed\n") && bob.string.hasPrefix("after the cut "))
        PeerProcessTests.shutDown([ann, bob], [first, second])
        Self.stop(relay)
    }

    /// Strangers at the relay, each from an address of its own: idle connections past the
    /// per-address bound, one speaking HTTP, one announcing a 200-byte rendezvous value, one
    /// sending its preamble a byte at a time, one sending bytes after its preamble, one waiting
    /// on a value nobody else has. Each is dropped in its own way (or keeps waiting) while the
    /// real pair links through the relay and syncs.
    @Test func junkAndIdleConnectionsDoNotKeepTheRealPairApart() throws {
        let (relay, port) = try Self.relay(["--max-unpaired-per-address", "4", "--preamble-timeout", "1"])
        let idle = (0..<12).map { _ in RelaySockets.connect(port, from: "127.0.0.2") }
        let http = RelaySockets.connect(port, from: "127.0.0.3")
        let oversized = RelaySockets.connect(port, from: "127.0.0.4")
        let slow = RelaySockets.connect(port, from: "127.0.0.5")
        let early = RelaySockets.connect(port, from: "127.0.0.6")
        let waiter = RelaySockets.connect(port, from: "127.0.0.7")
        let all = idle + [http, oversized, slow, early, waiter]
        defer { all.forEach { close($0) } }
        #expect(all.allSatisfy { $0 >= 0 })
        RelaySockets.send(http, Array("GET / HTTP/1.1\r\nHost: relay\r\n\r\n".utf8))
        RelaySockets.send(oversized, RelayWire.magic + [200] + [UInt8](repeating: 7, count: 200))
        RelaySockets.send(early, RelayWire.preamble(rendezvous: [UInt8](repeating: 1, count: 32)) + Array("hello?".utf8))
        RelaySockets.send(waiter, RelayWire.preamble(rendezvous: [UInt8](repeating: 2, count: 32)))
        let trickle = Thread {
            for byte in RelayWire.magic.prefix(8) {
                RelaySockets.send(slow, [byte])
                usleep(300_000)   // the slow sender's pace, not a wait for a result
            }
        }
        trickle.start()
        // The real pair, from 127.0.0.1, meanwhile.
        let (first, ann) = try Self.dialer(port, user: "ann")
        let (second, bob) = try Self.dialer(port, user: "bob")
        #expect(PeerLinkControlTests.waitForLink(bob, state: "established")?["user"] == "ann")
        #expect(Self.share(ann, bob, text: "served while strangers knock\n"))
        bob.edit(0..<0, with: "still ")
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        #expect(relay.waitForLog(containing: "unpaired connections from 127.0.0.2 already") != nil, "idle ones past the bound refused at once")
        #expect(relay.waitForLog(containing: "not a Quire relay preamble") != nil)
        #expect(relay.waitForLog(containing: "a rendezvous value of 200 bytes") != nil)
        #expect(relay.waitForLog(containing: "sent bytes after its preamble") != nil)
        #expect(relay.waitForLog(containing: "no whole preamble within 1.0 s") != nil)
        for (name, fd) in [("http", http), ("oversized", oversized), ("early", early), ("slow", slow)] {
            #expect(RelaySockets.closedByPeer(fd, timeout: 5), "\(name) is closed")
        }
        #expect(idle.allSatisfy { RelaySockets.closedByPeer($0, timeout: 5) }, "idle strangers are refused or time out")
        #expect(!RelaySockets.closedByPeer(waiter, timeout: 0.2), "a well-formed waiter waits (until its own deadline)")
        // The pair is still served after all of that.
        ann.edit(ann.text.count..<ann.text.count, with: "and after\n")
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        PeerProcessTests.shutDown([ann, bob], [first, second])
        Self.stop(relay)
    }

    /// A connection that names a value no one else names is told `expired` when the waiting time
    /// is over and closed; a daemon alone at the relay dials again at once after that.
    @Test func aWaitingConnectionWithNoPartnerExpires() throws {
        let (relay, port) = try Self.relay(["--wait-timeout", "1"])
        let fd = RelaySockets.connect(port)
        defer { close(fd) }
        RelaySockets.send(fd, RelayWire.preamble(rendezvous: [UInt8](repeating: 9, count: 32)))
        #expect(RelaySockets.read(fd, count: RelayWire.replyBytes, timeout: 10) == RelayWire.reply(.expired))
        #expect(RelaySockets.closedByPeer(fd, timeout: 5))
        #expect(relay.waitForLog(containing: "no partner within 1.0 s") != nil)
        let (lonely, editor) = try Self.dialer(port, user: "ann")
        #expect(lonely.waitForLog(containing: "dialing again in 0.0 s (no partner came to the relay in time)") != nil)
        #expect(editor.request("peer/status")["result"]?["links"] == [], "no link without a partner")
        PeerProcessTests.shutDown([editor], [lonely])
        Self.stop(relay)
    }

    /// With room for three connections, three idle strangers fill the relay: the next ones are
    /// told `f` and closed at once, their log lines past 20 are counted in one summary line, and
    /// once the strangers' preamble time is over a real pair gets in.
    @Test func aFullRelayRefusesAtOnceLogsBoundedlyAndFreesItsRoom() throws {
        let (relay, port) = try Self.relay(["--max-connections", "3", "--max-unpaired-per-address", "3", "--preamble-timeout", "1"])
        let idle = ["127.0.0.2", "127.0.0.3", "127.0.0.4"].map { RelaySockets.connect(port, from: $0) }
        defer { idle.forEach { close($0) } }
        #expect(idle.allSatisfy { $0 >= 0 })
        // The relay takes connections in the order they came, each counted in before the next is judged.
        for index in 0..<25 {
            let fd = RelaySockets.connect(port, from: "127.0.0.\(10 + index)")
            #expect(RelaySockets.read(fd, count: RelayWire.replyBytes, timeout: 5) == RelayWire.reply(.full), "connection \(index) told the relay is full")
            close(fd)
        }
        #expect(relay.waitForLog(containing: "the relay holds 3 connections, its limit") != nil)
        #expect(relay.waitForLog(containing: "more connection events within 10 seconds: relay full", timeout: 15) != nil, "the rest summed up in one line")
        #expect(Self.occurrences(of: "dropped 127.0.0.", in: relay.log) <= 20 + 3, "at most 20 lines per 10 seconds, then counts")
        // The strangers' preamble time runs out; a pair then gets in.
        #expect(idle.allSatisfy { RelaySockets.closedByPeer($0, timeout: 5) })
        let value = [UInt8](repeating: 3, count: 32)
        let first = RelaySockets.connect(port), second = RelaySockets.connect(port)
        defer { close(first); close(second) }
        RelaySockets.send(first, RelayWire.preamble(rendezvous: value))
        RelaySockets.send(second, RelayWire.preamble(rendezvous: value))
        let replies = [RelaySockets.read(first, count: RelayWire.replyBytes, timeout: 10),
                       RelaySockets.read(second, count: RelayWire.replyBytes, timeout: 10)]
        #expect(Set(replies) == [RelayWire.reply(.accept), RelayWire.reply(.connect)])
        Self.stop(relay)
    }

    /// An editor asks its daemon at run time to dial the relay (`peer/connect` with `relay: true`):
    /// it pairs with a daemon started with `--relay`, and they sync.
    @Test func anEditorCanDialARelayAtRunTime() throws {
        let (relay, port) = try Self.relay()
        let first = try DaemonProcess(arguments: ["--user-name", "ann", "--log-level", "info"], environment: PeerProcessTests.secret)
        let ann = TestEditor(process: first)
        ann.initialize(user: "ann")
        let (second, bob) = try Self.dialer(port, user: "bob")
        #expect(ann.request("peer/connect", ["host": "127.0.0.1", "port": .integer(Int64(port)), "relay": true])["result"] == .null)
        #expect(PeerLinkControlTests.waitForLink(ann, state: "established")?["address"] == .string("relay 127.0.0.1:\(port)"))
        #expect(Self.share(ann, bob, text: "asked for at run time\n"))
        bob.edit(0..<0, with: "> ")
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        PeerProcessTests.shutDown([ann, bob], [first, second])
        Self.stop(relay)
    }

    /// Two raw connections with the same value are paired (one accepts, the other connects) and,
    /// throttled to 8 KiB/s, get every byte the other sent, in order, and no faster than the
    /// bound allows: 40,000 bytes, less a burst of 8,192 and one read of overdraft, take at least
    /// 2.8 s (a slow machine only takes longer, so this lower bound cannot fail for want of speed).
    @Test func aThrottledPairDeliversEveryByteInOrderBothWays() throws {
        let (relay, port) = try Self.relay(["--bytes-per-second", "8192"])
        let value = [UInt8](repeating: 5, count: 32)
        let first = RelaySockets.connect(port), second = RelaySockets.connect(port)
        defer { close(first); close(second) }
        RelaySockets.send(first, RelayWire.preamble(rendezvous: value))
        RelaySockets.send(second, RelayWire.preamble(rendezvous: value))
        let replies = [RelaySockets.read(first, count: RelayWire.replyBytes, timeout: 10),
                       RelaySockets.read(second, count: RelayWire.replyBytes, timeout: 10)]
        #expect(Set(replies) == [RelayWire.reply(.accept), RelayWire.reply(.connect)], "one accepts, the other connects")
        #expect(relay.waitForLog(containing: "pair 1: ") != nil)
        var random = SeededRandom(seed: 7)
        let there = (0..<40_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let back = (0..<40_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let started = Date()
        Thread { RelaySockets.send(first, there) }.start()
        Thread { RelaySockets.send(second, back) }.start()
        #expect(RelaySockets.read(second, count: there.count, timeout: 30) == there)
        #expect(RelaySockets.read(first, count: back.count, timeout: 30) == back)
        #expect(Date().timeIntervalSince(started) >= 2.0, "the relay held each side to its rate")
        Self.stop(relay)
    }
}
