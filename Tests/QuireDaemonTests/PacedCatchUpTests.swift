import Foundation
import NIOCore
import NIOPosix
import JSON
import Logging
@testable import QuireDaemon
import ReplicatingTypes
import Testing
import QuireTestSupport

/// Catch-up goes at the pace the peer reads (issue 20): a catch-up far larger than the bound on
/// unsent output reaches a slow reader whole, with no more than the low-water mark plus one frame
/// of it written ahead of the reader; a peer that stops reading costs bounded memory, and is cut
/// once its live output waiting passes the bound. In process, on paced wires that count what a
/// side wrote as waiting until the other side read it: a bound of 64 KiB, a low-water mark of
/// 16 KiB, 100 operations per frame.
@Suite struct PacedCatchUpTests {
    static let bound = 64 << 10, lowWater = 16 << 10

    static func daemons(_ network: PeerTestNetwork, log: LogCapture? = nil) -> (Daemon, Daemon) {
        let configure: (inout Daemon.Configuration) -> Void = {
            $0.maximumUnsentPeerBytes = bound
            $0.catchUpLowWaterBytes = lowWater
            $0.maximumOperationsPerFrame = 100
        }
        return (network.makeDaemon(100, log: log, configure: configure), network.makeDaemon(200, configure: configure))
    }

    /// 512 KiB of text.
    static let halfMegabyte = String(repeating: String(repeating: "x", count: 1023) + "\n", count: 512)

    /// Ann's daemon holds six documents of 512 KiB (one frame each) and one of 2,000 runs (20
    /// frames of 100 operations): 3 MiB to catch up, 48 times the bound.
    static func annWithThreeMegabytes(on daemon: Daemon) -> TestEditor {
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        for i in 0..<6 { ann.open("big\(i)", text: halfMegabyte) }
        ann.open("runs", text: "")
        for i in 0..<2_000 { ann.edit(0..<0, with: "r\(i % 10)") }   // each before the last: a run of its own
        return ann
    }

    static func converged(_ a: Daemon, _ b: Daemon) -> Bool {
        a.documents.count == b.documents.count && a.documents.allSatisfy { uri, document in b.documents[uri]?.text.string == document.text.string }
    }

    /// The peer reads 4 KiB at a time. It gets all 3 MiB, and what ann typed meanwhile, and the
    /// link stays up; ann's daemon never had more than the low-water mark plus one frame written
    /// and unread.
    @Test func aLargeCatchUpReachesASlowReaderWhole() throws {
        let network = PeerTestNetwork()
        let (a, b) = Self.daemons(network)
        let ann = Self.annWithThreeMegabytes(on: a)
        let wire = try network.link(a, b, paced: true)
        let sender = try #require(wire.a)
        var carried = 0, mostUnsent = 0, steps = 0
        while steps < 10_000, !(wire.aToB.isEmpty && sender.outbox.isEmpty && steps > 0 && Self.converged(a, b)) {
            carried += network.carry(wire, atMost: 4096, daemons: [a, b])
            mostUnsent = max(mostUnsent, sender.unsentOutputBytes)
            steps += 1
            if steps == 200 {
                // Typing while the catch-up is under way: it follows what was sent before it.
                #expect(ann.edit(0..<0, with: "LIVE")["result"] != nil)
            }
        }
        #expect(Self.converged(a, b), "the reader got every document")
        #expect(b.documents["runs"]?.text.string.hasPrefix("LIVE") == true)
        #expect(sender.state == .established && wire.b?.state == .established, "the link stayed up: \(sender.closeReason ?? "")")
        #expect(carried > 48 * Self.bound, "\(carried) bytes went to the reader")
        #expect(mostUnsent <= Self.lowWater + wire.largestWrite,
                "at most the low-water mark and one frame were written ahead of the reader: \(mostUnsent), largest frame \(wire.largestWrite)")
        #expect(wire.largestWrite < 600 << 10)
    }

    /// The peer stops reading in the middle of the catch-up (it still sends): its daemon writes
    /// no more of the catch-up and is not cut for it, whatever the catch-up's size. Ann then types
    /// on: her live edits wait behind the catch-up, and once more than the bound of them wait,
    /// the link is cut, with a logged reason; ann's editor is answered all along.
    @Test func aPeerThatStopsReadingIsCutOnceItsLiveOutputPassesTheBound() throws {
        let network = PeerTestNetwork()
        let log = LogCapture()
        let (a, b) = Self.daemons(network, log: log)
        let ann = Self.annWithThreeMegabytes(on: a)
        let wire = try network.link(a, b, paced: true)
        let sender = try #require(wire.a)
        var steps = 0
        while steps < 1_000, !(sender.state == .established && sender.unsentOutputBytes > 0 && b.documents.count > 0) {
            network.carry(wire, atMost: 4096, daemons: [a, b])
            steps += 1
        }
        #expect(sender.state == .established && sender.outbox.holdsCatchUp, "the catch-up is under way")
        let written = sender.bytesOut
        for _ in 0..<50 { network.carry(wire, atMost: 0, daemons: [a, b]) }   // reads nothing from now on
        #expect(sender.bytesOut == written, "nothing more of the catch-up was written")
        #expect(sender.unsentOutputBytes <= Self.lowWater + wire.largestWrite)
        #expect(sender.state == .established, "catch-up waiting is no reason to cut")

        var typed = 0
        while sender.state == .established, typed < 200 {
            let reply = ann.edit(0..<0, with: String(repeating: "t", count: 1000))
            #expect(reply["result"] != nil, "edit \(typed) answered")
            network.carry(wire, atMost: 0, daemons: [a, b])
            typed += 1
        }
        #expect(sender.state == .closed, "cut after \(typed) edits")
        let reason = sender.closeReason ?? ""
        #expect(reason.hasPrefix("the peer does not read: "), "\(reason)")
        let waiting = Int(reason.split(separator: " ").dropFirst(5).first ?? "") ?? .max
        #expect(waiting <= Self.bound && waiting > Self.bound - 2 * 1100, "live output that waited: \(reason)")
        #expect(typed > Self.bound / 1100, "it took more than the bound of live edits")
        #expect(log.all.contains { $0.contains("cut off: the peer does not read") })
    }

    /// A peer that lists the documents again and again (lacking everything) and reads nothing
    /// queues one catch-up per document, not one per list: the queue stays as long as the
    /// documents are many, and once it reads again, it gets every document.
    @Test func askingAgainWithoutReadingQueuesOneCatchUpPerDocument() throws {
        let network = PeerTestNetwork()
        let (a, b) = Self.daemons(network)
        _ = Self.annWithThreeMegabytes(on: a)
        let wire = try network.link(a, b, paced: true)
        let sender = try #require(wire.a), asker = try #require(wire.b)
        var steps = 0
        while steps < 1_000, !(sender.state == .established && sender.unsentOutputBytes > 0 && asker.state == .established) {
            network.carry(wire, atMost: 4096, daemons: [a, b])
            steps += 1
        }
        let entries = a.documents.values.map { document -> JSONValue in
            ["uri": .string(document.uri), "id": .string(String(document.id)), "version": [:]]
        }
        for _ in 0..<1_000 {
            asker.send(.documents(["initial": false, "documents": .array(entries)]))
            network.carry(wire, atMost: 0, daemons: [a, b])
        }
        #expect(sender.state == .established)
        try #require(sender.outbox.count <= a.documents.count + 1, "\(sender.outbox.count) items queued for \(a.documents.count) documents")
        #expect(sender.unsentOutputBytes <= Self.lowWater + wire.largestWrite)
        steps = 0
        while steps < 10_000, !(sender.outbox.isEmpty && wire.aToB.isEmpty && Self.converged(a, b)) {
            network.carry(wire, atMost: 64 << 10, daemons: [a, b])
            steps += 1
        }
        #expect(Self.converged(a, b))
        #expect(sender.state == .established)
    }
}

/// The same over real TCP: a daemon served by the real transport (SwiftNIO, `PeerNetwork`) with
/// the bound at 64 KiB holds 3 MiB; a peer that reads 4 KiB at a time connects and gets all of it,
/// the link never cut. Before catch-up was paced, the whole 3 MiB was written at once and the link
/// cut for it, and cut again on every retry.
@Suite(.serialized) struct PacedCatchUpOverTCPTests {
    @Test func aCatchUpFortyEightTimesTheBoundCompletesOverTCP() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // The daemon is used on its event loop only, as the server uses it.
        let daemon = PeerTestNetwork().makeDaemon(300) {
            $0.maximumUnsentPeerBytes = PacedCatchUpTests.bound
            $0.catchUpLowWaterBytes = PacedCatchUpTests.lowWater
        }
        try loop.submit { _ = PacedCatchUpTests.annWithThreeMegabytes(on: daemon) }.wait()
        let transport = PeerNetwork(daemon: daemon, group: group, logger: Logger(label: "test"))
        let port = try loop.submit { try transport.listen(host: "127.0.0.1", port: 0) }.wait()
        defer { _ = try? loop.submit { transport.shutdown() }.wait() }
        let peer = try HostilePeerProcessTests.TCPPeer(port: port, receiveBuffer: 4096)
        let expected = try loop.submit { daemon.documents.mapValues { $0.text.string } }.wait()
        let lengths = expected.mapValues { $0.unicodeScalars.count }
        #expect(peer.pump(timeout: 60) { lengths.allSatisfy { uri, count in peer.daemon.documents[uri]?.text.count == count } },
                "the peer got every document")
        #expect(expected.allSatisfy { uri, text in peer.daemon.documents[uri]?.text.string == text })
        let states = try loop.submit { daemon.links.values.map { ($0.state, $0.closeReason ?? "") } }.wait()
        #expect(states.count == 1 && states.allSatisfy { $0.0 == .established }, "the link stayed up: \(states)")
        #expect(peer.link.bytesIn > 48 * PacedCatchUpTests.bound)
    }
}
