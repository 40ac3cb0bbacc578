import EditingTraces
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// Daemons paired in process: handshake, delta sync, live edits from editors on each side,
/// relays along chains, partitions, and peers that misbehave.
@Suite struct PeerSyncTests {
    static func text(_ daemon: Daemon, _ uri: String = "notes") -> String? { daemon.documents[uri]?.text.string }

    @Test func editsFlowBothWaysBetweenEditorsOnTwoDaemons() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        ann.open("notes", text: "hello\n")
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(wire.a?.state == .established && wire.b?.state == .established)
        #expect(Self.text(b) == "hello\n")
        let bob = TestEditor(daemon: b)
        bob.initialize(user: "bob")
        bob.open("notes", text: "hello\n")
        bob.edit(5..<5, with: " world")
        net.pump([a, b])
        ann.deliverInbox()
        #expect(ann.string == "hello world\n")
        ann.edit(0..<1, with: "H")
        net.pump([a, b])
        bob.deliverInbox()
        #expect(bob.string == "Hello world\n")
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func concurrentTypingOnBothSidesConverges(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let editors = [TestEditor(daemon: a), TestEditor(daemon: b), TestEditor(daemon: b)]
        editors[0].initialize()
        editors[0].open("notes", text: "one\ntwo\nthree\n")
        try net.link(a, b)
        net.pump([a, b])
        for editor in editors.dropFirst() {
            editor.initialize(encodings: ["utf-8"])
            editor.open("notes", text: "")
        }
        for editor in editors { editor.holdIncoming = true }
        for _ in 0..<300 {
            let editor = editors.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let at = Int.random(in: 0...editor.text.count, using: &random)
                editor.edit(at..<at, with: ConcurrentEditingTests.alphabet.randomElement(using: &random)!)
            case 5..<7 where !editor.text.isEmpty:
                let start = Int.random(in: 0..<editor.text.count, using: &random)
                editor.edit(start..<min(start + 2, editor.text.count), with: "")
            case 7:
                net.pump([a, b], limit: Int.random(in: 1...3, using: &random))
            default:
                editor.deliver(held: Int.random(in: 0...2, using: &random))
            }
        }
        net.pump([a, b])
        for editor in editors { editor.deliver() }
        #expect(Self.text(a) == Self.text(b), "seed \(seed)")
        for editor in editors { #expect(editor.string == Self.text(a), "seed \(seed)") }
        a.documents["notes"]?.text.scalars._checkInvariants()
    }

    @Test func chainWhereTheEndsNeverMeet() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200), c = net.makeDaemon(300)
        let ann = TestEditor(daemon: a), cat = TestEditor(daemon: c)
        ann.initialize()
        ann.open("notes", text: "abc")
        try net.link(a, b)
        try net.link(b, c)
        net.pump([a, b, c])
        cat.initialize()
        cat.open("notes", text: "")
        #expect(cat.string == "abc")
        cat.edit(3..<3, with: "d")
        ann.edit(0..<0, with: ">")
        net.pump([a, b, c])
        ann.deliverInbox()
        cat.deliverInbox()
        #expect(ann.string == ">abcd" && cat.string == ">abcd")
        #expect(Self.text(b) == ">abcd")
    }

    @Test func partitionThenHealSendsOnlyWhatIsMissing() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize()
        let big = (0..<2000).map { "line \($0) of a long shared document" }.joined(separator: "\n")
        ann.open("notes", text: big)
        let first = try net.link(a, b)
        net.pump([a, b])
        bob.initialize()
        bob.open("notes", text: big)
        net.sever(first)
        // Offline on both sides.
        for i in 0..<20 { ann.edit(i..<i, with: "a") }
        for i in 0..<20 { bob.edit(bob.text.count..<bob.text.count, with: "b\(i)") }
        let second = try net.link(a, b)
        net.pump([a, b])
        ann.deliverInbox()
        bob.deliverInbox()
        #expect(Self.text(a) == Self.text(b))
        #expect(ann.string == bob.string)
        #expect(ann.string.hasPrefix(String(repeating: "a", count: 20)) && ann.string.hasSuffix("b19"))
        // The catch-up carried the missing edits, not the document (about 70 KB).
        let bytes = (second.a?.bytesOut ?? 0) + (second.b?.bytesOut ?? 0)
        #expect(bytes < 4_000, "caught up with \(bytes) bytes")
    }

    @Test func sameNameWithIndependentHistoriesKeepsBoth() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize()
        ann.open("notes", text: "ann's notes")
        bob.initialize()
        bob.open("notes", text: "bob's notes")
        try net.link(a, b)
        net.pump([a, b])
        #expect(Self.text(a) == "ann's notes" && Self.text(b) == "bob's notes")
        let annCopyOfBobs = a.documents.keys.first { $0.hasPrefix("notes#") }
        let bobCopyOfAnns = b.documents.keys.first { $0.hasPrefix("notes#") }
        #expect(annCopyOfBobs.flatMap { Self.text(a, $0) } == "bob's notes")
        #expect(bobCopyOfAnns.flatMap { Self.text(b, $0) } == "ann's notes")
    }

    @Test func wrongSecretIsRefusedAndNothingCrosses() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200, secret: PeerSecret.generate())
        let ann = TestEditor(daemon: a)
        ann.initialize()
        ann.open("notes", text: "private")
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(wire.a?.state == .closed && wire.b?.state == .closed)
        #expect(wire.a?.closeReason?.contains("authentication failed") == true || wire.b?.closeReason?.contains("authentication failed") == true)
        #expect(b.documents.isEmpty)
        #expect(a.links.isEmpty && b.links.isEmpty)
    }

    @Test func noSecretNoPeering() {
        let daemon = PeerTestNetwork().makeDaemon(1, secret: nil)
        #expect(throws: PeeringError.self) { try daemon.makePeerLink(write: { _ in }, close: {}) }
    }

    /// A fake peer that writes raw bytes to one real link.
    static func rawPeer(_ daemon: Daemon) throws -> (PeerLink, () -> [UInt8]) {
        var out: [UInt8] = []
        let link = try daemon.makePeerLink(write: { out += $0 }, close: {})
        link.start()
        return (link, { out })
    }

    @Test func wrongProtocolVersionIsNamed() throws {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let (link, _) = try Self.rawPeer(daemon)
        link.receive(PeerFrame.hello(["protocol": 99, "replica": "5", "nonce": .string(String(repeating: "ab", count: 16))]).encoded())
        #expect(link.state == .closed)
        #expect(link.closeReason?.contains("protocol version mismatch") == true)
    }

    @Test func garbageIsCutOffAndTheDaemonKeepsServingItsEditor() throws {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        editor.open("notes", text: "x")
        let (link, _) = try Self.rawPeer(daemon)
        link.receive(Array("GET / HTTP/1.1\r\n\r\n".utf8))
        #expect(link.state == .closed)
        #expect(editor.request("document/text", ["uri": "notes"])["result"]?["text"] == "x")
    }

    /// Two linked daemons, A with Ann showing "notes" ("abc"), synced.
    static func linkedWithNotes(_ base: UInt64) throws -> (net: PeerTestNetwork, a: Daemon, b: Daemon, ann: TestEditor, wire: PeerTestNetwork.Wire) {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(base), b = net.makeDaemon(base + 100)
        let ann = TestEditor(daemon: a)
        ann.initialize()
        ann.open("notes", text: "abc")
        let wire = try net.link(a, b)
        net.pump([a, b])
        return (net, a, b, ann, wire)
    }

    @Test func aDamagedStateAndAStateOrRoundBeforeAuthenticationAreCutOffChangingNothing() throws {
        let (net, a, b, ann, wire) = try Self.linkedWithNotes(300)
        defer { _ = (ann, b) }
        guard let aSide = wire.a, let bSide = wire.b else { Issue.record("no link"); return }
        bSide.send(PeerFrame.state(uri: "notes", documentID: 9, payload: [2, 1, 7, 0xFF, 0xFF]))
        net.pump([a])
        #expect(aSide.state == .closed && aSide.closeReason?.hasPrefix("undecodable state of notes") == true, "\(String(describing: aSide.closeReason))")
        #expect(a.documents.count == 1 && a.documents["notes"]?.text.string == "abc")
        for frame in [PeerFrame.state(uri: "notes", documentID: 1, payload: []), .stability(["uri": "notes", "phase": "ask"])] {
            let daemon = net.makeDaemon(500)
            let (link, _) = try Self.rawPeer(daemon)
            link.receive(frame.encoded())
            #expect(link.state == .closed && daemon.documents.isEmpty)
            #expect(link.closeReason?.contains("before authentication") == true, "\(String(describing: link.closeReason))")
        }
    }

    @Test func oversizedFrameIsRefusedBeforeItsBody() throws {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let (link, _) = try Self.rawPeer(daemon)
        link.receive([0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3])
        #expect(link.state == .closed)
        #expect(link.closeReason?.contains("exceeds the limit") == true)
    }

    @Test func operationsBeforeAuthenticationAreRefused() throws {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let (link, _) = try Self.rawPeer(daemon)
        var text = ReplicatingText(replica: ReplicaID(77))
        let ops = text.replace(0..<0, with: Array("sneaky".unicodeScalars))
        link.receive(PeerFrame.operations(uri: "notes", documentID: 1, payload: ReplicatingArrayCoding.encode(ops)).encoded())
        #expect(link.state == .closed)
        #expect(daemon.documents.isEmpty)
    }

    @Test func invalidOperationsAndClaimsFromTheFutureAreCutOff() throws {
        let (net, a, b, ann, wire) = try Self.linkedWithNotes(100)
        guard let document = a.documents["notes"], let bSide = wire.b else { Issue.record("no link"); return }
        // A duplicate ID with different content, sent by b as if it were real.
        let annReplica = try #require(ann.connection.session.view(of: "notes")?.replica)
        var forged = ReplicatingText(replica: annReplica)   // reuses the IDs of ann's own "abc"
        let ops = forged.replace(0..<0, with: Array("XYZ".unicodeScalars))
        bSide.sendOperations(ops, of: b.documents["notes"]!)
        net.pump([a, b])
        #expect(document.text.string == "abc", "the forged operation was not applied")
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.closeReason?.contains("invalid operation") == true)

        // A version vector claiming edits a's editor never made.
        let again = try net.link(a, b)
        net.pump([a, b])
        #expect(again.a?.state == .established)
        let claim = PeerFrame.documents(["documents": [["uri": "notes", "id": .string(String(document.id)),
                                                        "version": .object([String(annReplica.rawValue): 999])]]])
        again.b?.send(claim)   // sealed, as an authenticated peer sends it
        net.pump([a, b])
        #expect(again.a?.state == .closed)
        #expect(again.a?.closeReason?.contains("from the future") == true)
    }
}

/// Dead-peer detection, driven by a fake clock.
@Suite struct PeerHeartbeatTests {
    @Test func silentPeerIsCutAfterThreeIntervalsAndHeartbeatsKeepALinkAlive() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let wire = try net.link(a, b)
        net.pump([a, b])
        // Both sides tick: heartbeats flow and nobody is cut.
        for second in stride(from: 0.0, through: 60.0, by: 5.0) {
            a.tickPeers(now: second, interval: 5)
            b.tickPeers(now: second, interval: 5)
            net.pump([a, b])
        }
        #expect(wire.a?.state == .established && wire.b?.state == .established)
        // b stalls: it neither sends nor answers. a cuts it after more than three intervals.
        for second in stride(from: 65.0, through: 90.0, by: 5.0) {
            a.tickPeers(now: second, interval: 5)
            wire.aToB.removeAll()
        }
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.closeReason?.contains("no word from the peer") == true)
    }
}

/// The editor's peer requests, against a transport that records what it was asked.
@Suite struct PeerRequestTests {
    final class RecordingTransport: PeerTransport {
        var asked: [String] = []
        var listeningPorts: [Int] = []
        func listen(host: String, port: Int) throws -> Int { asked.append("listen \(host):\(port)"); listeningPorts.append(7070); return 7070 }
        func listen(host: String, port: Int, scope: DocumentScope?) throws -> Int {
            asked.append("listen \(host):\(port) \(scope.map(\.description) ?? "any")")
            return 7070
        }
        func stopListening(port: Int) -> Bool { asked.append("stop \(port)"); return listeningPorts.contains(port) }
        func connect(host: String, port: Int, fingerprint: String?) throws {
            asked.append("connect \(host):\(port)" + (fingerprint.map { " pinned \($0)" } ?? ""))
        }
        func connect(command: String, fingerprint: String?) throws { asked.append("command \(command)") }
        func connect(relayHost: String, port: Int, fingerprint: String?) throws { asked.append("relay \(relayHost):\(port)") }
        func connect(host: String, port: Int, fingerprint: String?, scope: DocumentScope) throws {
            asked.append("connect \(host):\(port) \(scope)")
        }
        func connect(relayHost: String, port: Int, fingerprint: String?, scope: DocumentScope) throws { asked.append("relay \(relayHost):\(port) \(scope)") }
        func connect(command: String, fingerprint: String?, scope: DocumentScope) throws { asked.append("command \(command) \(scope)") }
        func disconnect(scope: DocumentScope) { asked.append("disconnect \(scope)") }
        func connect(addresses: [(host: String, port: Int)], fingerprint: String?, scope: DocumentScope) throws {
            asked.append("connect \(addresses.map { "\($0.host):\($0.port)" }.joined(separator: " or ")) \(scope)")
        }
    }

    @Test func peerRequestsReachTheTransport() {
        let daemon = PeerTestNetwork().makeDaemon(1)
        let transport = RecordingTransport()
        daemon.transport = transport
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(editor.request("peer/listen", ["port": 0])["result"]?["port"] == 7070)
        #expect(editor.request("peer/connect", ["host": "example", "port": 9])["result"] == .null)
        #expect(editor.request("peer/connect", ["command": "ssh h quire peer --stdio"])["result"] == .null)
        #expect(editor.request("peer/stopListening", ["port": 7070])["result"]?["stopped"] == true)
        #expect(editor.request("peer/connect", ["port": 9, "fingerprint": "3F1C-0a9e-0000-1111-2222-3333-4444-5555"])["result"] == .null)
        #expect(editor.request("peer/connect", ["port": 9, "fingerprint": "3f1c"])["error"]?["code"] == -32602, "a fingerprint too short to pin anything")
        #expect(transport.asked == ["listen 127.0.0.1:0", "connect example:9", "command ssh h quire peer --stdio", "stop 7070",
                                    "connect 127.0.0.1:9 pinned 3F1C-0a9e-0000-1111-2222-3333-4444-5555"])
        #expect(editor.request("peer/listen", ["port": 70000])["error"]?["code"] == -32602)
        #expect(editor.request("peer/disconnect", ["link": 42])["error"]?["code"] == -32602)
        #expect(editor.request("peer/status")["result"]?["links"] == [])
    }

    @Test func withoutASecretPeeringIsUnavailable() {
        let daemon = PeerTestNetwork().makeDaemon(1, secret: nil)
        let transport = RecordingTransport()   // there is a network: only the secret is missing
        daemon.transport = transport
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let reply = withExtendedLifetime(transport) { editor.request("peer/listen", ["port": 0]) }
        #expect(reply["error"]?["code"] == -32016)
        #expect(reply["error"]?["message"]?.stringValue?.contains("secret") == true)
    }

    @Test func editorsHearPeersJoinAndLeave() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200, user: "bob")
        let editor = TestEditor(daemon: a)
        editor.initialize()
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(editor.take("peer/changed").map { $0["params"]?["event"] } == ["joined"])
        net.sever(wire)
        let left = editor.take("peer/changed")
        #expect(left.first?["params"]?["user"] == "bob")
        #expect(left.first?["params"]?["reason"] != nil)
    }
}

/// A document is known to peers as soon as it exists, even empty, so an editor opening the same
/// name on the other side joins it rather than starting an unrelated document.
@Suite struct PeerDocumentAnnouncementTests {
    @Test func emptyDocumentCreatedBeforeTheLinkIsJoined() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize()
        ann.open("doc", text: "")
        try net.link(a, b)
        net.pump([a, b])
        bob.initialize()
        #expect(bob.open("doc", text: "")["result"]?["created"] == false)
        bob.edit(0..<0, with: "hi")
        net.pump([a, b])
        ann.deliverInbox()
        #expect(ann.string == "hi")
    }

    @Test func documentCreatedWhileLinkedIsJoinedWithItsText() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        try net.link(a, b)
        net.pump([a, b])
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize()
        ann.open("later", text: "typed before bob came\n")
        net.pump([a, b])
        bob.initialize()
        let reply = bob.open("later", text: "")
        #expect(reply["result"]?["created"] == false)
        #expect(bob.string == "typed before bob came\n")
        #expect(b.documents.keys.sorted() == ["later"], "no second copy")
    }
}

/// Operations that wait for anchors that never come are bounded.
@Suite struct PeerBufferBoundTests {
    @Test func operationsWaitingForeverForTheirAnchorsCutThePeer() throws {
        let net = PeerTestNetwork()
        var config = Daemon.Configuration(peerSecret: try PeerSecret.material(from: PeerTestNetwork.secret))
        config.maximumBufferedOperations = 5
        var next: UInt64 = 100
        let a = Daemon(configuration: config, replicaSource: { next += 1; return ReplicaID(next) })
        let b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize()
        ann.open("notes", text: "abc")
        let wire = try net.link(a, b)
        net.pump([a, b])
        // b sends insertions anchored to an element nobody ever made (replica 9999).
        var ghost = ReplicatingText("ghost", replica: ReplicaID(9999))
        var orphans: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for i in 0..<10 {
            ghost.replica = ReplicaID(5000 + UInt64(i))
            orphans.append(contentsOf: ghost.replace(3..<3, with: ["x"]))
        }
        let forwarded = orphans.compactMap { op -> ReplicatingArrayOperation<Unicode.Scalar>? in
            if case .insert = op { return op } else { return nil }
        }
        guard let document = b.documents["notes"] else { Issue.record("no document"); return }
        wire.b?.sendOperations(forwarded, of: document)
        net.pump([a, b])
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.closeReason?.contains("wait for anchors") == true)
        #expect(a.documents["notes"]?.text.string == "abc")
    }
}

/// A peer cannot make a daemon hold unbounded numbers of documents.
@Suite struct PeerDocumentBoundTests {
    @Test func tooManyDocumentsCutThePeer() throws {
        let net = PeerTestNetwork()
        var config = Daemon.Configuration(peerSecret: try PeerSecret.material(from: PeerTestNetwork.secret))
        config.maximumDocuments = 3
        let a = Daemon(configuration: config)
        let b = net.makeDaemon(200)
        let wire = try net.link(a, b)
        net.pump([a, b])
        let bob = TestEditor(daemon: b)
        bob.initialize()
        for i in 0..<5 { bob.request("document/open", ["uri": .string("doc\(i)"), "text": "x"]) }
        net.pump([a, b])
        #expect(wire.a?.state == .closed)
        #expect(wire.a?.closeReason?.contains("more than 3 documents") == true)
        #expect(a.documents.count == 3)
    }
}
