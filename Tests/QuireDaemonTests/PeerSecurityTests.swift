import Crypto
import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// An attacker on the network against real daemons (in process, the bytes of each link in the
/// attacker's hands): relayed, reflected and replayed handshakes, tampered, replayed and
/// reordered frames, and what a stranger can make a daemon do before authenticating.
/// Each attack is refused with a reason, nothing of a document reaches or comes from the
/// attacker, and the daemon keeps serving its editor.
@Suite struct PeerSecurityTests {
    static let privateText = "private words nobody else may read"

    /// Daemon `base` with Ann showing "notes" with the private text.
    static func daemonWithNotes(_ net: PeerTestNetwork, _ base: UInt64, secret: String = PeerTestNetwork.secret,
                                log: LogCapture? = nil) -> (Daemon, TestEditor) {
        let daemon = net.makeDaemon(base, secret: secret, log: log)
        let ann = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        ann.open("notes", text: privateText)
        return (daemon, ann)
    }

    /// A link of `daemon` whose other end is the attacker: returns the link and everything it
    /// wrote so far, one chunk per frame. `incoming`: the attacker connected (the daemon
    /// accepts); otherwise the daemon connected to the attacker.
    static func attackerLink(to daemon: Daemon, incoming: Bool = true) throws -> (PeerLink, () -> [[UInt8]]) {
        var out: [[UInt8]] = []
        let link = try daemon.makePeerLink(write: { out.append($0) }, close: {}, incoming: incoming)
        link.start()
        return (link, { out })
    }

    static func contains(_ chunks: [[UInt8]], _ text: String) -> Bool {
        let needle = Array(text.utf8), haystack = chunks.flatMap { $0 }
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// A hello as the attacker makes it: its own ephemeral key, any nonce.
    static func attackerHello(nonce: String, role: String = "connect") -> [UInt8] {
        let key = Hex.encode(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        return PeerFrame.hello(["protocol": .integer(Int64(PeerLink.protocolVersion)), "nonce": .string(nonce), "key": .string(key),
                                "role": .string(role)]).encoded()
    }

    static func nonce(in hello: [UInt8]) -> String? {
        (try? PeerFrame.decode(Array(hello.dropFirst(4)))).flatMap { frame in
            if case .hello(let json) = frame { return json["nonce"]?.stringValue }
            return nil
        }
    }

    /// The issue's relay: the attacker connects to A and tells it it is P, with P's nonce, shows
    /// P (which connected to the attacker) A's hello, and forwards P's proof to A. The proof is
    /// bound to P's transcript, which holds P's key exchange, not the attacker's: A cannot even
    /// open it, and A never sent anything that depends on the secret.
    @Test func aProofRelayedFromAnotherDaemonIsRefused() throws {
        let net = PeerTestNetwork()
        let (a, ann) = Self.daemonWithNotes(net, 100)
        let p = net.makeDaemon(200)
        let (toA, fromA) = try Self.attackerLink(to: a)
        let (toP, fromP) = try Self.attackerLink(to: p, incoming: false)
        let helloOfA = fromA()[0], helloOfP = fromP()[0]
        toA.receive(Self.attackerHello(nonce: try #require(Self.nonce(in: helloOfP))))
        toP.receive(helloOfA)
        let proofOfP = fromP().dropFirst()
        #expect(!proofOfP.isEmpty, "P answered the hello with its sealed proof")
        for chunk in proofOfP { toA.receive(chunk) }
        #expect(toA.state == .closed)
        #expect(toA.closeReason?.contains("authentication failed") == true, "\(String(describing: toA.closeReason))")
        #expect(!Self.contains(fromA(), "private"), "nothing of the document went to the attacker")
        #expect(fromA().count == 2, "A sent its hello and a goodbye, nothing that depends on the secret")
        #expect(a.documents.count == 1 && a.documents["notes"]?.text.string == Self.privateText)
        #expect(ann.request("document/text", ["uri": "notes"])["result"]?["text"]?.stringValue == Self.privateText, "A still serves its editor")
    }

    /// Forwarding every byte unchanged makes the attacker a wire: A and P link with each other
    /// (each sees the other's key), and what crosses is sealed.
    @Test func aRelayThatForwardsEverythingLinksTheRealPeersAndReadsNothing() throws {
        let relay = try Self.relayedPair()
        defer { _ = relay.ann }
        let (a, p, toA, fromA, toP) = (relay.a, relay.p, relay.toA, relay.fromA, relay.toP)
        #expect(toA.state == .established && toP.state == .established)
        #expect(toA.peerFingerprint == p.identity.fingerprint && toP.peerFingerprint == a.identity.fingerprint)
        #expect(p.documents["notes"]?.text.string == Self.privateText, "the document reached P")
        #expect(!Self.contains(fromA(), "private") && !Self.contains(fromA(), "words"), "but not in the clear")
    }

    /// Carries every byte between two attacker links until nothing moves.
    static func forward(_ a: Daemon, _ toA: PeerLink, _ fromA: () -> [[UInt8]], _ p: Daemon, _ toP: PeerLink, _ fromP: () -> [[UInt8]]) {
        var seenA = 0, seenP = 0
        for _ in 0..<50 {
            a.flush(); a.commit(); p.flush(); p.commit()
            let newA = fromA().dropFirst(seenA), newP = fromP().dropFirst(seenP)
            if newA.isEmpty && newP.isEmpty { return }
            seenA += newA.count
            seenP += newP.count
            for chunk in newA { toP.receive(chunk) }
            for chunk in newP { toA.receive(chunk) }
        }
    }

    /// A (Ann showing the private notes) and P linked through an attacker who forwards every byte.
    static func relayedPair() throws -> (a: Daemon, ann: TestEditor, p: Daemon, toA: PeerLink, fromA: () -> [[UInt8]],
                                         toP: PeerLink, fromP: () -> [[UInt8]]) {
        let net = PeerTestNetwork()
        let (a, ann) = Self.daemonWithNotes(net, 100)
        let p = net.makeDaemon(200)
        let (toA, fromA) = try Self.attackerLink(to: a)
        let (toP, fromP) = try Self.attackerLink(to: p, incoming: false)
        Self.forward(a, toA, fromA, p, toP, fromP)
        return (a, ann, p, toA, fromA, toP, fromP)
    }

    /// A's own hello sent back to it: refused before any key is used.
    @Test func aReflectedHelloIsRefused() throws {
        let net = PeerTestNetwork()
        let (a, _) = Self.daemonWithNotes(net, 100)
        let (link, out) = try Self.attackerLink(to: a)
        link.receive(out()[0])
        #expect(link.state == .closed)
        #expect(link.closeReason?.contains("sent back our own hello") == true, "\(String(describing: link.closeReason))")
        #expect(!Self.contains(out(), "private"))
    }

    /// Everything P sent on a real link, recorded and played again to A on a new link.
    @Test func aRecordedHandshakeReplayedIsRefused() throws {
        let relay = try Self.relayedPair()
        defer { _ = (relay.ann, relay.p) }
        let (a, fromP) = (relay.a, relay.fromP)
        #expect(relay.toA.state == .established)
        let (replayed, out) = try Self.attackerLink(to: a)
        for chunk in fromP() where replayed.state != .closed { replayed.receive(chunk) }
        #expect(replayed.state == .closed)
        #expect(replayed.closeReason?.contains("authentication failed") == true, "\(String(describing: replayed.closeReason))")
        #expect(!Self.contains(out(), "private"))
        #expect(a.documents.count == 1)
    }

    /// B's editor types; on the way to A one frame is changed, sent twice, or swapped with the
    /// next. A cuts the link before using anything of it, and its text stays as it was.
    @Test(arguments: ["tampered", "replayed", "reordered"])
    func aDamagedFrameCutsTheLinkAndChangesNothing(damage: String) throws {
        let net = PeerTestNetwork()
        let (a, ann) = Self.daemonWithNotes(net, 100)
        let b = net.makeDaemon(200)
        let wire = try net.link(a, b)
        net.pump([a, b])
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("notes", text: "")
        let before = a.documents["notes"]?.text.string
        bob.edit(0..<0, with: "X")
        b.flush(); b.commit()
        bob.edit(1..<1, with: "Y")
        b.flush(); b.commit()
        #expect(wire.bToA.count >= 2, "two frames of operations on their way")
        switch damage {
        case "tampered": wire.bToA[0][wire.bToA[0].count - 20] ^= 0x01
        case "replayed": wire.bToA.insert(wire.bToA[0], at: 1)
        default: wire.bToA.swapAt(0, 1)
        }
        net.pump([a, b])
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.closeReason?.contains("integrity check") == true, "\(String(describing: wire.a?.closeReason))")
        if damage == "replayed" {
            #expect(a.documents["notes"]?.text.string == "X" + (before ?? ""), "the frame before the replay was whole and is kept; the replay is not applied")
        } else {
            #expect(a.documents["notes"]?.text.string == before)
        }
        #expect(ann.request("document/text", ["uri": "notes"])["result"] != nil)
    }

    /// Before authentication a frame may hold 4 KiB: announcing more cuts the link at once.
    @Test func aLargeFrameBeforeAuthenticationIsRefusedAtItsHeader() throws {
        let net = PeerTestNetwork()
        let (a, _) = Self.daemonWithNotes(net, 100)
        let (link, _) = try Self.attackerLink(to: a)
        link.receive([0x00, 0x00, 0x10, 0x01])   // 4,097 bytes announced
        #expect(link.state == .closed)
        #expect(link.closeReason == "frame of 4097 bytes exceeds the limit of 4096 before authentication")
    }

    /// A handshake that does not end in time is cut, however the bytes trickle in: a stranger
    /// that connected must send its hello within 2 seconds, and end the handshake within 10.
    @Test func aSlowHandshakeIsCut() throws {
        let net = PeerTestNetwork()
        let (a, _) = Self.daemonWithNotes(net, 100)
        let (link, _) = try Self.attackerLink(to: a)
        let hello = Self.attackerHello(nonce: String(repeating: "ab", count: 32))
        for (second, byte) in hello.prefix(12).enumerated() {
            link.receive([byte])
            a.tickPeers(now: Double(second), interval: 5)
        }
        #expect(link.state == .closed)
        #expect(link.closeReason == "no hello within 2 seconds")
        // A hello in time, then no proof of the secret.
        let (slow, _) = try Self.attackerLink(to: a)
        a.tickPeers(now: 100, interval: 5)
        slow.receive(hello)
        for second in stride(from: 101.0, through: 112, by: 1) { a.tickPeers(now: second, interval: 5) }
        #expect(slow.state == .closed)
        #expect(slow.closeReason == "no handshake within 10 seconds")
    }

    /// At most 16 links handshake at once; more are refused without a link, and editors hear of
    /// the failures in one summary per interval, not one notification each.
    @Test func strangersAreCappedAndEditorsGetSummaries() throws {
        let net = PeerTestNetwork()
        let (a, ann) = Self.daemonWithNotes(net, 100)
        var clock = 1_000.0
        a.clock = { clock }
        // Twenty strangers with a wrong secret.
        for n in 0..<20 {
            let wrong = net.makeDaemon(1_000 + UInt64(n) * 10, secret: PeerSecret.generate())
            try net.link(a, wrong)
            net.pump([a, wrong])
        }
        var told = ann.take("peer/changed")
        #expect(told.count == 1, "one notification for the first failure: \(told)")
        #expect(told.first?["params"]?["event"] == "failed")
        clock += 11
        a.tickPeers(now: clock, interval: 5)
        told = ann.take("peer/changed")
        #expect(told.count == 1, "then one summary: \(told)")
        let summary = told.first?["params"]?["reason"]?.stringValue ?? ""
        #expect(summary.contains("more peer attempts failed") && summary.contains("authentication failed"), "\(summary)")
        // Sixteen say nothing; the seventeenth is refused without a link.
        var idle: [PeerLink] = []
        for _ in 0..<16 { idle.append(try Self.attackerLink(to: a).0) }
        #expect(throws: PeeringError.self) { try a.makePeerLink(write: { _ in }, close: {}) }
        #expect((try? a.makePeerLink(write: { _ in }, close: {}, incoming: false)) != nil, "links the daemon starts itself are not held back")
        // The idle ones time out and free their places.
        for link in idle { link.handshakeTimedOut() }
        #expect(idle.allSatisfy { $0.state == .closed })
        #expect((try? a.makePeerLink(write: { _ in }, close: {})) != nil)
    }

    /// A peer's user name reaches editors at most 64 characters long, with no control or
    /// format characters (no terminal escapes, no reordering marks).
    @Test func aPeersUserNameIsCleanAndShort() throws {
        #expect(PeerLink.displayName("\u{1B}[2J bob\u{202E}\u{7}\n") == "[2J bob")
        #expect(PeerLink.displayName(String(repeating: "x", count: 100_000)).count == 64)
        let net = PeerTestNetwork()
        let (a, ann) = Self.daemonWithNotes(net, 100)
        let b = net.makeDaemon(200, user: "\u{1B}]0;owned\u{7}mallory" + String(repeating: "!", count: 500))
        try net.link(a, b)
        net.pump([a, b])
        let joined = ann.take("peer/changed").first?["params"]?["user"]?.stringValue ?? ""
        #expect(joined.hasPrefix("]0;ownedmallory") && joined.count == 64 && !joined.unicodeScalars.contains { $0.value < 0x20 }, "\(joined.debugDescription)")
    }

    /// The identity key stays the same across restarts (so a pin keeps working), and only its
    /// owner can read the file it is kept in.
    @Test func theIdentityKeyIsKeptPrivatelyAcrossRestarts() throws {
        let path = DaemonProcess.temporaryDirectory("identity")
        var first: DocumentStore? = try DocumentStore(path: path, logger: Logger(label: "test"))
        let fingerprint = first?.identity.fingerprint
        first = nil
        let again = try DocumentStore(path: path, logger: Logger(label: "test"))
        #expect(again.identity.fingerprint == fingerprint)
        #expect(fingerprint?.count == 39, "eight groups of four hex digits: \(fingerprint ?? "")")
        let attributes = try FileManager.default.attributesOfItem(atPath: path + "/identity")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(PeerIdentity().fingerprint != fingerprint)
    }

    /// A link pinned to one fingerprint refuses a peer with the secret but another key.
    @Test func aPinnedLinkRefusesAnotherKey() throws {
        let net = PeerTestNetwork()
        let (a, _) = Self.daemonWithNotes(net, 100)
        let b = net.makeDaemon(200), c = net.makeDaemon(300)
        let pinned = try net.link(a, b)
        pinned.a?.expectedFingerprint = c.identity.fingerprint
        net.pump([a, b])
        #expect(pinned.a?.state == .closed)
        #expect(pinned.a?.closeReason?.contains("is not the pinned") == true, "\(String(describing: pinned.a?.closeReason))")
        #expect(b.documents.isEmpty, "nothing went to the unpinned peer")
        #expect(pinned.b?.peerFingerprint == nil && pinned.b?.peerUser == nil, "A checked the pin before it said who it is")
        let good = try net.link(a, c)
        good.a?.expectedFingerprint = c.identity.fingerprint.uppercased()
        net.pump([a, c])
        #expect(good.a?.state == .established)
    }
}
