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
}
