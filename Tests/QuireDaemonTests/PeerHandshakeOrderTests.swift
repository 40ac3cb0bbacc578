import Crypto
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// Issue 20, items 12 to 16, in process: what a stranger can learn of the secret from one
/// handshake, pinning before anything is shown, secrets people cannot choose, handshake slots
/// that idle strangers cannot hold against a real peer, and presence a peer cannot flood or spoof.
@Suite struct PeerHandshakeOrderTests {
    typealias Security = PeerSecurityTests

    static func randomNonce() -> String { Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) }) }

    /// A frame body sealed under keys the attacker made up: its guess of the secret. Its first
    /// byte is a goodbye's kind (6), as one random body in 256 begins: still a wrong secret, not
    /// a goodbye in the clear (the rest is not UTF-8, as a goodbye's reason is).
    static func guessedFrame() -> [UInt8] {
        var body = (0..<64).map { _ in UInt8.random(in: 0...255) }
        body[0] = 6
        body[1] = 0xFF
        return PeerHandshake.bigEndian(64) + body
    }

    // MARK: Item 12: nothing to guess against

    /// A stranger connects and says hello: the accepting daemon answers with its hello and
    /// nothing else, and when the stranger's "proof" does not open, says goodbye in the clear.
    /// Nothing it sent depends on the secret, so there is nothing to test guesses against.
    @Test func aStrangerThatConnectsGetsNothingThatDependsOnTheSecret() throws {
        let net = PeerTestNetwork()
        let log = LogCapture()
        let (a, ann) = Security.daemonWithNotes(net, 100, log: log)
        let (link, out) = try Security.attackerLink(to: a)
        link.receive(Security.attackerHello(nonce: Self.randomNonce()))
        #expect(out().count == 1, "A's hello and nothing more until the connector proved the secret")
        link.receive(Self.guessedFrame())
        #expect(link.state == .closed)
        #expect(link.closeReason?.hasPrefix("authentication failed: wrong secret") == true, "\(String(describing: link.closeReason))")
        #expect(out().count == 2)
        let bye = try PeerFrame.decode(Array(out()[1].dropFirst(4)))
        #expect(bye == .bye(reason: link.closeReason ?? ""), "the goodbye is in the clear, sealed under nothing")
        #expect(log.all.contains { $0.contains("cut off: authentication failed: wrong secret") }, "\(log.all)")
        #expect(ann.request("document/text", ["uri": "notes"])["result"]?["text"]?.stringValue == Security.privateText)
    }

    /// A daemon that connects to whatever answers sends its hello and one small sealed proof,
    /// which names nothing (no user, replica or key); the impostor's answer does not open and
    /// the link is cut.
    @Test func aDaemonThatConnectsShowsOnlyItsProof() throws {
        let net = PeerTestNetwork()
        let (a, ann) = Security.daemonWithNotes(net, 100)
        let (link, out) = try Security.attackerLink(to: a, incoming: false)
        link.receive(Security.attackerHello(nonce: Self.randomNonce(), role: "accept"))
        #expect(out().count == 2, "its hello and its proof")
        #expect(out()[1].count < 120, "a proof alone: \(out()[1].count) bytes")
        link.receive(Self.guessedFrame())
        #expect(link.state == .closed)
        #expect(link.closeReason?.contains("authentication failed") == true)
        #expect(!Security.contains(out(), "ann") && !Security.contains(out(), "private"))
        #expect(ann.request("document/list")["result"] != nil)
    }

    /// Two acceptors (or two connectors) cannot make a link: one side must prove first.
    @Test func bothSidesAcceptingIsRefused() throws {
        let net = PeerTestNetwork()
        let (a, _) = Security.daemonWithNotes(net, 100)
        let (link, out) = try Security.attackerLink(to: a)
        link.receive(Security.attackerHello(nonce: Self.randomNonce(), role: "accept"))
        #expect(link.state == .closed)
        #expect(link.closeReason?.contains("both sides accepted") == true, "\(String(describing: link.closeReason))")
        #expect(out().count == 2)
    }

    // MARK: Item 14: pins before identity

    /// A pinned accepting daemon checks the connector's key before it shows its own: a peer with
    /// the secret but another key learns neither its name, replica nor key.
    @Test func aPinnedAcceptorChecksThePinBeforeShowingItself() throws {
        let net = PeerTestNetwork()
        let (a, _) = Security.daemonWithNotes(net, 100)
        let c = net.makeDaemon(300)
        let log = LogCapture()
        let b = net.makeDaemon(200, user: "bea", log: log) { $0.trustedPeerFingerprints = [PeerIdentity.normalized(c.identity.fingerprint)] }
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(wire.b?.closeReason?.contains("is not among the pinned fingerprints") == true, "\(String(describing: wire.b?.closeReason))")
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.peerFingerprint == nil && wire.a?.peerUser == nil, "b showed nothing of itself")
        #expect(b.documents.isEmpty)
        #expect(log.all.contains { $0.contains("cut off: authentication failed: the peer's key") }, "\(log.all)")
        // The pinned key links, both ways pinned.
        let good = try net.link(c, b)
        good.a?.expectedFingerprint = b.identity.fingerprint
        net.pump([c, b])
        #expect(good.a?.state == .established && good.b?.state == .established)
        #expect(good.a?.peerUser == "bea")
    }

    // MARK: Items 12 and 13: secrets

    @Test func onlySecretsMadeByQuireAreTaken() throws {
        let secret = PeerSecret.generate()
        #expect(secret.hasPrefix("quire-") && secret.count == 62)
        let material = try PeerSecret.material(from: secret)
        #expect(material.count == 30)
        #expect(try PeerSecret.material(from: "  " + secret.uppercased().replacingOccurrences(of: "QUIRE-", with: "quire-") + "\n") == material)
        #expect(PeerSecret.generate() != secret)
        // The last one changes the last character (to another one: a fixed "2" was the same secret
        // one time in 32).
        for weak in ["a", "s3cret", "correct horse battery staple", "CorrectHorseBatteryStaple1234567890abcdefgh",
                     "quire-" + String(repeating: "a", count: 56), String(secret.dropLast()), String(secret.dropLast()) + (secret.last == "2" ? "3" : "2")] {
            #expect(throws: PeerSecret.Refusal.self, "\(weak)") { try PeerSecret.material(from: weak) }
        }
        do {
            _ = try PeerSecret.material(from: "correct horse", source: "QUIRE_SECRET")
        } catch {
            #expect(error.description.hasPrefix("QUIRE_SECRET is too short") && error.description.contains("run `quire secret`"))
        }
        // A daemon configured in code with too little key material refuses to peer.
        let weakDaemon = PeerTestNetwork().makeDaemon(1, secret: nil) { $0.peerSecret = Array("s3cret".utf8) }
        #expect(throws: PeeringError.self) { try weakDaemon.makePeerLink(write: { _ in }, close: {}) }
    }

    // MARK: Item 15: handshake slots

    /// Sixteen strangers, each from its own address, say hello and then nothing, holding every
    /// handshake slot; a peer whose address authenticated before still links at once (the oldest
    /// stranger gives up its slot), while a new stranger is refused.
    @Test func aKnownPeerLinksWhileStrangersHoldEverySlot() throws {
        let net = PeerTestNetwork()
        let log = LogCapture()
        let (a, ann) = Security.daemonWithNotes(net, 100, log: log)
        let p = net.makeDaemon(200)
        let first = try net.link(p, a, host: "192.0.2.7")
        net.pump([a, p])
        #expect(first.b?.state == .established)
        net.sever(first)
        var strangers: [PeerLink] = []
        for n in 0..<16 {
            let link = try a.makePeerLink(write: { _ in }, close: {}, remoteHost: "198.51.100.\(n)")
            link.start()
            link.receive(Security.attackerHello(nonce: Self.randomNonce()))
            strangers.append(link)
        }
        #expect(throws: PeeringError.self, "a seventeenth stranger is refused") {
            try a.makePeerLink(write: { _ in }, close: {}, remoteHost: "203.0.113.1")
        }
        let again = try net.link(p, a, host: "192.0.2.7")
        net.pump([a, p])
        #expect(again.a?.state == .established && again.b?.state == .established, "the known peer links")
        let evicted = strangers.filter { $0.state == .closed }
        #expect(evicted.count == 1 && evicted.first === strangers.first)
        #expect(evicted.first?.closeReason?.contains("authenticated here before") == true)
        #expect(log.all.contains { $0.contains("refused: 16 handshakes already under way") }, "\(log.all)")
        #expect(p.documents["notes"]?.text.string == Security.privateText)
        #expect(ann.request("document/text", ["uri": "notes"])["result"]?["text"]?.stringValue == Security.privateText)
    }

    /// One address holds at most four handshakes at once; other addresses are not held back.
    @Test func oneAddressHoldsAtMostFourHandshakes() throws {
        let net = PeerTestNetwork()
        let (a, _) = Security.daemonWithNotes(net, 100)
        for _ in 0..<4 { try a.makePeerLink(write: { _ in }, close: {}, remoteHost: "198.51.100.9").start() }
        #expect(throws: PeeringError.self) { try a.makePeerLink(write: { _ in }, close: {}, remoteHost: "198.51.100.9") }
        #expect((try? a.makePeerLink(write: { _ in }, close: {}, remoteHost: "198.51.100.10")) != nil)
    }

    // MARK: Item 16: presence

    static func presence(_ peer: HostilePeerTests.HostilePeer, origin: String? = nil, sequence: UInt64, left: Bool = false) -> PeerFrame {
        let document = peer.victim.documents["notes"]
        let anchor = SharedDocument.Anchor.start
        return .presence(PresenceMessage(uri: "notes", documentID: document?.id ?? 0, origin: origin ?? "\(peer.attacker.replica.rawValue):1",
                                         sequence: sequence, user: WireUser(name: "mallory"), selections: left ? [] : [(anchor, anchor)]).json)
    }

    /// 10,000 presence frames in one read become one `cursor/update`.
    @Test func presenceIsCoalescedPerRead() throws {
        let (_, a, ann, peer) = try HostilePeerTests.victim()
        _ = ann.take("cursor/update")
        peer.send((1...10_000).map { Self.presence(peer, sequence: UInt64($0)) })
        #expect(ann.take("cursor/update").count == 1)
        #expect(peer.toVictim.state == .established)
        HostilePeerTests.stillServes(a, ann)
    }

    /// Frames spread over many reads are applied at most at the link's rate; the rest wait,
    /// coalesced, and the newest is shown once the rate allows.
    @Test func presenceIsRateLimitedPerLink() throws {
        let (_, a, ann, peer) = try HostilePeerTests.victim()
        var now = 1_000.0
        a.monotonicClock = { now }
        _ = ann.take("cursor/update")
        for n in 1...2_000 { peer.send(Self.presence(peer, sequence: UInt64(n))) }
        let told = ann.take("cursor/update")
        #expect(told.count == Int(a.configuration.presenceBurst), "\(told.count) notifications")
        now += 1
        a.tickPeers(now: now, interval: 5)
        let later = ann.take("cursor/update")
        #expect(later.count == 1, "the newest waiting message, once")
        #expect(a.documents["notes"]?.peerPresences.values.first?.sequence == 2_000)
        HostilePeerTests.stillServes(a, ann)
    }

    /// A peer cannot speak for a daemon linked here directly: Mallory claims Bob's origin with a
    /// huge sequence to mute (or move) his cursor; it is ignored, and Bob's cursor still moves.
    @Test func aPeerCannotSpoofOrMuteAnotherDaemonsCursor() throws {
        let net = PeerTestNetwork()
        let log = LogCapture()
        let (a, ann) = Security.daemonWithNotes(net, 100, log: log)
        let b = net.makeDaemon(200)
        try net.link(b, a)
        net.pump([a, b])
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("notes", text: "")
        let peer = try HostilePeerTests.HostilePeer(net, victim: a, base: 300)
        PeerPresenceTests.moveCursor(bob, to: 3)
        net.pump([a, b])
        #expect(ann.take("cursor/update").last?["params"]?["user"]?["name"] == "bob")
        let origin = try #require(a.documents["notes"]?.peerPresences.keys.first)
        peer.send(Self.presence(peer, origin: origin, sequence: .max - 1, left: true))
        peer.send(Self.presence(peer, origin: origin, sequence: .max))
        #expect(ann.take("cursor/update").isEmpty, "nothing of Mallory's claims reached Ann")
        #expect(a.documents["notes"]?.peerPresences[origin]?.viaLink != peer.toVictim.id)
        #expect(log.all.filter { $0.contains("is taken only from its own daemon's link") }.count == 1, "logged once: \(log.all)")
        PeerPresenceTests.moveCursor(bob, to: 5)
        net.pump([a, b])
        let update = ann.take("cursor/update").last?["params"]
        #expect(update?["user"]?["name"] == "bob")
        #expect(update?["selections"] == [["start": ["line": 0, "character": 5], "end": ["line": 0, "character": 5]]])
        #expect(peer.toVictim.state == .established, "relayed copies are dropped, not punished")
    }
}
