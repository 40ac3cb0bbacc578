import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A stranger on the network connects again as soon as each attempt is cut, to make the daemon
/// do key-exchange work in a loop. Incoming handshakes are held to a rate per source address and
/// one for all addresses; past it a connection is refused before any link (or key) is made.
@Suite struct HandshakeRateTests {
    /// A connection from `host` that is cut at once (the attacker hangs up): its slot is freed,
    /// so only the rate can refuse the next.
    static func attempt(_ daemon: Daemon, from host: String) -> PeeringError? {
        do {
            let link = try daemon.makePeerLink(write: { _ in }, close: {}, incoming: true, remoteHost: host)
            link.start()
            link.close("the stranger hung up")
            return nil
        } catch let error as PeeringError {
            return error
        } catch {
            return nil
        }
    }

    @Test func oneAddressIsHeldToItsRate() {
        let net = PeerTestNetwork()
        var clock = 1_000.0
        let a = net.makeDaemon(100) { $0.handshakesPerSecondPerAddress = 2; $0.handshakeBurstPerAddress = 5 }
        a.clocks.monotonic = { clock }
        let results = (0..<20).map { _ in Self.attempt(a, from: "198.51.100.7") }
        #expect(results.prefix(5).allSatisfy { $0 == nil }, "a burst of 5 is taken")
        #expect(results.dropFirst(5).allSatisfy { $0?.isRateRefusal == true }, "\(results)")
        #expect(results.last.map { "\($0!)" }?.contains("more peer handshakes from 198.51.100.7 than the 2 a second (bursts of 5)") == true)
        #expect(Self.attempt(a, from: "203.0.113.9") == nil, "another address is not held to this one's rate")
        clock += 1
        #expect(Self.attempt(a, from: "198.51.100.7") == nil && Self.attempt(a, from: "198.51.100.7") == nil, "2 a second come back")
        #expect(Self.attempt(a, from: "198.51.100.7")?.isRateRefusal == true)
        #expect(a.peerLinks.links.isEmpty, "no link is kept for a refused attempt")
    }

    @Test func allAddressesTogetherAreHeldToARateButKnownPeersAreNot() throws {
        let net = PeerTestNetwork()
        var clock = 1_000.0
        let a = net.makeDaemon(100) { $0.handshakesPerSecond = 1; $0.handshakeBurst = 3 }
        a.clocks.monotonic = { clock }
        // A peer authenticated from 192.0.2.1 before: the strangers' flood does not lock it out.
        let friend = net.makeDaemon(300)
        let wire = try net.link(friend, a, host: "192.0.2.1")
        net.pump([a, friend])
        #expect(wire.b?.state == .established)
        let strangers = (0..<10).map { Self.attempt(a, from: "198.51.100.\($0)") }
        #expect(strangers.prefix(2).allSatisfy { $0 == nil }, "the friend's link took one of the burst of 3: \(strangers)")
        #expect(strangers.dropFirst(2).allSatisfy { $0?.isRateRefusal == true }, "\(strangers)")
        #expect(strangers.last.map { "\($0!)" }?.contains("than the 1 a second (bursts of 3) this daemon takes from addresses no peer authenticated from") == true)
        #expect(Self.attempt(a, from: "192.0.2.1") == nil, "the known address reconnects")
        clock += 1
        #expect(Self.attempt(a, from: "198.51.100.200") == nil)
    }

    @Test func aFloodIsLoggedOncePerInterval() {
        let net = PeerTestNetwork()
        let log = LogCapture()
        let a = net.makeDaemon(100, log: log) { $0.handshakesPerSecondPerAddress = 1; $0.handshakeBurstPerAddress = 1 }
        a.clocks.monotonic = { 1_000 }
        for _ in 0..<200 { _ = Self.attempt(a, from: "198.51.100.7") }
        let lines = log.all.filter { $0.contains("more peer handshakes from 198.51.100.7") }
        #expect(lines.count == 1, "\(lines.count) lines")
    }

    /// A daemon's own stdio link (no address) is not held to the rate.
    @Test func aLinkWithoutAnAddressIsNotCounted() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) { $0.handshakesPerSecond = 1; $0.handshakeBurst = 1; $0.handshakeBurstPerAddress = 1 }
        a.clocks.monotonic = { 1_000 }
        for _ in 0..<5 {
            let link = try a.makePeerLink(write: { _ in }, close: {}, incoming: true)
            link.start()
            link.close("done")
        }
    }

    /// A host holds a whole IPv6 /64: its addresses share one bucket.
    @Test func theAddressesOfOneIPv6SlashSixtyFourShareABucket() {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100) { $0.handshakesPerSecondPerAddress = 1; $0.handshakeBurstPerAddress = 3 }
        a.clocks.monotonic = { 1_000 }
        let results = (0..<6).map { Self.attempt(a, from: "2001:db8:1:2::\(String($0 + 1, radix: 16))") }
        #expect(results.prefix(3).allSatisfy { $0 == nil } && results.dropFirst(3).allSatisfy { $0?.isRateRefusal == true }, "\(results)")
        #expect(results.last.map { "\($0!)" }?.contains("from 2001:db8:1:2::/64") == true)
        #expect(Self.attempt(a, from: "2001:db8:1:3::1") == nil, "another /64 has its own bucket")
        #expect(HandshakeRate.source(of: "198.51.100.7") == "198.51.100.7" && HandshakeRate.source(of: "::1") == "::1")
    }

    /// The table of addresses stays bounded under a flood from ever new addresses.
    @Test func theAddressTableIsBounded() {
        var rate = HandshakeRate()
        var configuration = Daemon.Configuration()
        configuration.handshakesPerSecond = 1e9
        configuration.handshakeBurst = 1e9
        for i in 0..<(HandshakeRate.maximumAddresses + 500) {
            #expect(rate.take(host: "10.0.\(i / 256).\(i % 256)", known: false, now: 5, configuration: configuration) == nil)
        }
        #expect(rate.addressesKept == HandshakeRate.maximumAddresses)
        // Once their buckets filled again they are forgotten for new ones.
        _ = rate.take(host: "172.16.0.1", known: false, now: 100, configuration: configuration)
        #expect(rate.addressesKept == 1)
    }
}
