import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A writer (or anyone holding the general secret, who can make a new key for every link) opens
/// link after link, each authenticated: each may hold a 16 MiB frame half sent and 9 MiB of
/// output. Links others made are capped in all and per address, and a peer key keeps at most a
/// few links of one scope (the oldest goes).
@Suite struct PeerLinkCapTests {
    @Test func aPeerKeysOldestLinkOfAScopeIsReplacedPastTheCap() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) { $0.maximumLinksPerPeer = 2 }
        let b = net.makeDaemon(200)
        let wires = try (0..<3).map { _ in try net.link(b, a, host: "192.0.2.1") }
        net.pump([a, b])
        #expect(wires[0].b?.state == .closed)
        #expect(wires[0].b?.closeReason?.contains("replaced by a newer link of the same peer (at most 2 of one peer and scope)") == true,
                "\(String(describing: wires[0].b?.closeReason))")
        #expect(wires[1].b?.state == .established && wires[2].b?.state == .established)
        #expect(a.peerLinks.established.count == 2)
    }

    @Test func linksOthersMadeAreCappedInAllAndPerAddress() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) { $0.maximumIncomingPeerLinks = 3; $0.maximumPeerLinksPerAddress = 2 }
        let hosts = ["198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.3"]
        var wires: [PeerTestNetwork.Wire] = []
        for (n, host) in hosts.enumerated() {
            let peer = net.makeDaemon(1_000 + UInt64(n) * 100)
            wires.append(try net.link(peer, a, host: host))
            net.pump([a, peer])
        }
        let reasons = wires.map { $0.b?.state == .established ? "up" : ($0.b?.closeReason ?? "?") }
        #expect(reasons[0] == "up" && reasons[1] == "up" && reasons[3] == "up", "\(reasons)")
        #expect(reasons[2].contains("already has 2 peer links from 198.51.100.1, the most it keeps from one address"), "\(reasons)")
        #expect(reasons[4].contains("already has 3 peer links others made, the most it keeps"), "\(reasons)")
        #expect(a.peerLinks.established.count == 3)
        // A link this daemon made itself is not counted.
        let own = net.makeDaemon(2_000)
        let outgoing = try net.link(a, own)
        net.pump([a, own])
        #expect(outgoing.a?.state == .established)
    }

    /// Every member who reaches a daemon over ssh (`ssh host quire peer --stdio`) comes through
    /// its peer socket, which only the user's own processes reach: a team there is not one
    /// address's worth of links, and their reconnects after a restart are not refused for one
    /// address's handshake rate. The limits in all still hold; a TCP address is still held to its own.
    @Test func membersThroughThePeerSocketAreNotHeldToOneAddresssLimits() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) {
            $0.maximumPeerLinksPerAddress = 2; $0.maximumIncomingPeerLinks = 6
            $0.handshakeBurstPerAddress = 2; $0.handshakesPerSecondPerAddress = 0.001
        }
        var wires: [PeerTestNetwork.Wire] = []
        for n in 0..<7 {
            let member = net.makeDaemon(1_000 + UInt64(n) * 100)
            do { wires.append(try net.link(member, a, host: PeerSocketServer.address)) } catch {
                Issue.record("member \(n) refused at once: \(error)")
                continue
            }
            net.pump([a, member])
        }
        let reasons = wires.map { $0.b?.state == .established ? "up" : ($0.b?.closeReason ?? "?") }
        #expect(reasons.prefix(6).allSatisfy { $0 == "up" }, "\(reasons)")
        #expect(reasons.last?.contains("already has 6 peer links others made, the most it keeps") == true, "\(reasons)")
        // From a TCP address, the third handshake in a burst of two is refused at once.
        let b = net.makeDaemon(5_000)
        let c = net.makeDaemon(5_100)
        let d = net.makeDaemon(5_200)
        _ = try net.link(b, a, host: "203.0.113.9")
        _ = try net.link(c, a, host: "203.0.113.9")
        #expect(throws: PeeringError.self) { _ = try net.link(d, a, host: "203.0.113.9") }
    }
}
