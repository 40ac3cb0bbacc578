import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// Scoped sharing (protocol/peer.md, *Which documents*; protocol/decisions/project-sharing.md):
/// a link made with a project's secret carries that project's documents (`@<key>/...`) only, a
/// link made with the general secret every other document only, and a peer that names a
/// document outside its link's scope is cut.
@Suite struct ScopedSharingTests {
    /// A project's secret (as `quire share` makes one) and its key.
    static func project() throws -> (secret: [UInt8], key: String) {
        let secret = try PeerSecret.material(from: PeerSecret.generate())
        return (secret, DocumentScope.projectKey(secret: secret))
    }

    /// Daemon A with the general secret and project K's; an editor on A of the general document
    /// `notes` and one of K's document `@K/f-1`.
    struct Host {
        let net = PeerTestNetwork()
        let a: Daemon
        let project: (secret: [UInt8], key: String)
        let general: TestEditor
        let inProject: TestEditor
        var projectURI: String { DocumentScope.projectURI(key: project.key, file: "f-1") }

        init(base: UInt64 = 100) throws {
            project = try ScopedSharingTests.project()
            a = net.makeDaemon(base)
            try a.addPeerSecret(project.secret, scope: .project(key: project.key))
            general = TestEditor(daemon: a)
            general.initialize(user: "ann")
            general.open("notes", text: "general text\n")
            inProject = TestEditor(daemon: a)
            inProject.initialize(user: "ann")
            inProject.open(DocumentScope.projectURI(key: project.key, file: "f-1"), text: "project text\n")
        }

        /// A daemon holding only K's secret (no general one).
        func projectPeer(_ base: UInt64) throws -> Daemon {
            let c = net.makeDaemon(base, secret: nil)
            try c.addPeerSecret(project.secret, scope: .project(key: project.key))
            return c
        }
    }

    static func moveCursor(_ editor: TestEditor, to offset: Int) {
        editor.notify("cursor/update", ["uri": .string(editor.uri), "epoch": .integer(Int64(editor.epoch)),
                                        "revision": .integer(Int64(editor.daemonRevision)),
                                        "selections": [["start": editor.position(of: offset), "end": editor.position(of: offset)]]])
    }

    @Test func eachLinkCarriesOnlyTheDocumentsOfItsScope() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let b = net.makeDaemon(200)                 // the general secret only
        let c = try host.projectPeer(300)           // K's secret only, dials with it
        let toB = try net.link(b, a)
        let toC = try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, b, c])
        for wire in [toB, toC] { #expect(wire.a?.state == .established && wire.b?.state == .established, "\(String(describing: wire.b?.closeReason))") }
        #expect(toB.b?.scope == .general && toB.a?.scope == .general)
        #expect(toC.b?.scope == .project(key: host.project.key) && toC.a?.scope == .project(key: host.project.key),
                "the accepting side found the scope from the proof")
        #expect(b.documents.keys.sorted() == ["notes"], "B never hears of K's documents")
        #expect(c.documents.keys.sorted() == [host.projectURI], "C never hears of the general document")
        #expect(b.document("notes")?.text.string == "general text\n")
        #expect(c.document(host.projectURI)?.text.string == "project text\n")
        #expect(toB.b?.behind == 0 && toC.b?.behind == 0, "what a link does not carry is not counted as behind")

        // Live edits and cursors follow the same rule; any frame outside a link's scope would cut it.
        let bob = TestEditor(daemon: b), cy = TestEditor(daemon: c)
        bob.initialize(user: "bob")
        bob.open("notes", text: "general text\n")
        cy.initialize(user: "cy")
        cy.open(host.projectURI, text: "project text\n")
        host.general.edit(0..<0, with: "G ")
        host.inProject.edit(0..<0, with: "P ")
        Self.moveCursor(host.general, to: 3)
        Self.moveCursor(host.inProject, to: 4)
        net.pump([a, b, c])
        // Digests on every link (a new link asks about every document it shares).
        for _ in 0..<3 {
            for daemon in [a, b, c] { daemon.tickPeers(now: 1, interval: 5) }
            net.pump([a, b, c])
        }
        for wire in [toB, toC] { #expect(wire.a?.state == .established && wire.b?.state == .established, "\(String(describing: wire.a?.closeReason))") }
        #expect(b.document("notes")?.text.string == "G general text\n" && b.documents.count == 1)
        #expect(c.document(host.projectURI)?.text.string == "P project text\n" && c.documents.count == 1)
        #expect(toB.a?.operationsIn == toB.b?.operationsOut && toC.a?.operationsIn == toC.b?.operationsOut)
        #expect(b.document("notes")?.peerPresences.isEmpty == false, "ann's cursor in notes reached B")
        #expect(c.document(host.projectURI)?.peerPresences.isEmpty == false, "ann's cursor in K's document reached C")

        // The peers' own edits come back only on their link.
        bob.deliverInbox()
        cy.deliverInbox()
        bob.edit(0..<0, with: "b")
        cy.edit(0..<0, with: "c")
        net.pump([a, b, c])
        #expect(a.document("notes")?.text.string == "bG general text\n")
        #expect(a.document(host.projectURI)?.text.string == "cP project text\n")
        #expect(b.documents.count == 1 && c.documents.count == 1)
    }

    @Test func aStabilityRoundInvolvesOnlyTheLinksOfItsDocumentsScope() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let b = net.makeDaemon(200), c = try host.projectPeer(300)
        let toB = try net.link(b, a)
        let toC = try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, b, c])
        host.inProject.edit(0..<8, with: "")        // removes "project ": tombstones to drop
        net.pump([a, b, c])
        let document = try #require(a.document(host.projectURI))
        #expect(a.startStabilityRound(document))
        let round = try #require(a.stabilityRounds.active.values.first { $0.document === document })
        #expect(round.waiting == [try #require(toC.b?.id)], "only K's link takes part")
        net.pump([a, b, c])
        #expect(toB.b?.state == .established && toC.b?.state == .established)
        #expect(a.stabilityRounds.active.isEmpty, "the round over C's link finished")
    }

    /// A peer on K's link (C) that names the general document, in each kind of frame.
    @Test(arguments: ["operations", "state", "documents", "presence", "digest", "stability"])
    func aFrameNamingADocumentOutsideTheLinksScopeCutsIt(kind: String) throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let c = try host.projectPeer(300)
        let toC = try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, c])
        let peer = try #require(toC.a), accepting = try #require(toC.b)
        #expect(accepting.state == .established)
        let notes = try #require(a.document("notes"))
        let text = ReplicatingText(replica: ReplicaID(999))
        let frame: PeerFrame
        switch kind {
        case "operations": frame = .operations(uri: "notes", documentID: notes.id, payload: ReplicatingArrayCoding.encode(text.operations()))
        case "state": frame = .state(uri: "notes", documentID: notes.id, payload: text.encodedState())
        case "documents": frame = .documents(["initial": false, "documents": [["uri": "notes", "id": .string(String(notes.id)), "version": [:]]]])
        case "presence":
            frame = .presence(PresenceMessage(uri: "notes", documentID: notes.id, origin: "300:1", sequence: 1, user: WireUser(name: "cy"),
                                              selections: []).json)
        case "digest": frame = .digest(DigestMessage(phase: .ask, uri: "notes", documentID: notes.id, digest: notes.digest, received: 0).json)
        default: frame = .stability(["uri": "notes", "id": .string(String(notes.id)), "round": "301:1", "phase": "ask"])
        }
        peer.send(frame)
        net.pump([a, c])
        #expect(accepting.state == .closed)
        #expect(accepting.closeReason?.contains("\"notes\", a document outside this link's scope (project \(host.project.key))") == true,
                "\(String(describing: accepting.closeReason))")
        #expect(a.document("notes")?.text.string == "general text\n", "nothing of the frame was used")
    }

    /// Records what the peer links tell the project service; throws for a payload `[0xEE]`.
    final class ProjectPort: ProjectFrames {
        var established: [(link: Int, key: String, scope: DocumentScope?)] = []
        var received: [(key: String, payload: [UInt8], link: Int, documentsHere: Int)] = []
        var sendOnEstablishment: [UInt8]?
        weak var daemon: Daemon?

        struct Refused: Error, CustomStringConvertible { var description: String { "a tree operation that does not decode" } }

        func projectLinkEstablished(_ link: any PeerEndpoint, key: String) {
            established.append((link.id, key, link.scope))
            if let payload = sendOnEstablishment { link.sendProjectFrame(key: key, payload: payload) }
        }

        func receiveProjectFrame(key: String, payload: [UInt8], from link: any PeerEndpoint) throws {
            if payload == [0xEE] { throw Refused() }
            received.append((key, payload, link.id, daemon?.documents.count ?? -1))
        }
    }

    @Test func projectFramesReachTheProjectServiceOnlyOnTheirScope() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let key = host.project.key
        let b = net.makeDaemon(200), c = try host.projectPeer(300)
        let portA = ProjectPort(), portB = ProjectPort(), portC = ProjectPort()
        portA.sendOnEstablishment = [1, 2, 3]
        portC.daemon = c
        a.projectFrames = portA
        b.projectFrames = portB
        c.projectFrames = portC
        let toB = try net.link(b, a)
        let toC = try net.link(c, a, scope: .project(key: key))
        net.pump([a, b, c])
        let linkC = try #require(toC.b)
        #expect(portA.established.map(\.key) == [key] && portA.established.first?.link == linkC.id)
        #expect(portA.established.first?.scope == .project(key: key))
        #expect(portC.established.map(\.key) == [key], "both ends of K's link tell their project service")
        #expect(portB.established.isEmpty, "a general link is no project's")
        #expect(portC.received.map(\.payload) == [[1, 2, 3]] && portC.received.first?.key == key)
        #expect(portC.received.first?.documentsHere == 0, "the tree came before the document list")

        // C sends tree operations: they reach A's port, from C's link.
        try #require(toC.a).sendProjectFrame(key: key, payload: [9, 8])
        net.pump([a, b, c])
        #expect(portA.received.map(\.payload) == [[9, 8]] && portA.received.first?.link == linkC.id)

        // Sending a project frame on a link of another scope sends nothing.
        try #require(toB.b).sendProjectFrame(key: key, payload: [7])
        try #require(toC.b).sendProjectFrame(key: String(repeating: "0", count: 16), payload: [7])
        net.pump([a, b, c])
        #expect(portB.received.isEmpty && portC.received.count == 1)
        #expect(toB.a?.state == .established && toC.a?.state == .established)

        // A peer that sends one on a general link is cut.
        try #require(toB.a).send(.project(key: key, payload: [5]))
        net.pump([a, b, c])
        #expect(toB.b?.state == .closed && toB.b?.closeReason?.contains("a project frame for project \(key) on a link of general") == true,
                "\(String(describing: toB.b?.closeReason))")
        #expect(portA.received.count == 1)

        // The project service's refusal cuts the link with its reason.
        try #require(toC.a).send(.project(key: key, payload: [0xEE]))
        net.pump([a, b, c])
        #expect(linkC.state == .closed && linkC.closeReason?.contains("project \(key): a tree operation that does not decode") == true,
                "\(String(describing: linkC.closeReason))")
    }

    @Test func aProjectFrameForAnotherProjectOrWithABadKeyCutsTheLink() throws {
        for key in ["0123456789abcdef", "0123456789ABCDEF", "short"] {
            let host = try Host()
            let (net, a) = (host.net, host.a)
            let c = try host.projectPeer(300)
            let toC = try net.link(c, a, scope: .project(key: host.project.key))
            net.pump([a, c])
            try #require(toC.a).send(.project(key: key, payload: [1]))
            net.pump([a, c])
            let reason = toC.b?.closeReason ?? ""
            #expect(toC.b?.state == .closed)
            #expect(key == "0123456789abcdef" ? reason.contains("a project frame for project \(key) on a link of project")
                                              : reason.contains("a project frame whose key is not 16 lowercase hex digits"), "\(reason)")
        }
    }

    @Test func theAcceptingSidePicksTheRightOneOfThreeSecrets() throws {
        let net = PeerTestNetwork()
        let one = try Self.project(), two = try Self.project()
        let a = net.makeDaemon(100)
        try a.addPeerSecret(one.secret, scope: .project(key: one.key))
        try a.addPeerSecret(two.secret, scope: .project(key: two.key))
        let d = net.makeDaemon(200)                      // general
        let e = net.makeDaemon(300, secret: nil), f = net.makeDaemon(400, secret: nil)
        try e.addPeerSecret(one.secret, scope: .project(key: one.key))
        try f.addPeerSecret(two.secret, scope: .project(key: two.key))
        let toD = try net.link(d, a), toE = try net.link(e, a, scope: .project(key: one.key))
        let toF = try net.link(f, a, scope: .project(key: two.key))
        net.pump([a, d, e, f])
        #expect(toD.b?.state == .established && toD.b?.scope == .general)
        #expect(toE.b?.state == .established && toE.b?.scope == .project(key: one.key))
        #expect(toF.b?.state == .established && toF.b?.scope == .project(key: two.key))
    }

    @Test func aWrongSecretFailsWithTheSameMessageWhateverTheSecretsHeld() throws {
        let net = PeerTestNetwork()
        let one = try Self.project(), other = try Self.project()
        let single = net.makeDaemon(100)
        let several = net.makeDaemon(200)
        try several.addPeerSecret(one.secret, scope: .project(key: one.key))
        let stranger = net.makeDaemon(300, secret: nil), stranger2 = net.makeDaemon(400, secret: nil)
        try stranger.addPeerSecret(other.secret, scope: .project(key: other.key))
        try stranger2.addPeerSecret(other.secret, scope: .project(key: other.key))
        let toSingle = try net.link(stranger, single, scope: .project(key: other.key))
        let toSeveral = try net.link(stranger2, several, scope: .project(key: other.key))
        net.pump([single, several, stranger, stranger2])
        for wire in [toSingle, toSeveral] {
            #expect(wire.a?.wasEstablished == false && wire.b?.wasEstablished == false)
        }
        #expect(toSingle.b?.closeReason?.hasPrefix("authentication failed: wrong secret") == true, "\(String(describing: toSingle.b?.closeReason))")
        #expect(toSeveral.b?.closeReason == toSingle.b?.closeReason)
        #expect(toSeveral.a?.closeReason == toSingle.a?.closeReason, "\(String(describing: toSeveral.a?.closeReason))")
        #expect(several.documents.isEmpty && stranger2.documents.isEmpty)
    }

    @Test func removingAProjectSecretClosesThatScopesLinksOnly() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let b = net.makeDaemon(200), c = try host.projectPeer(300)
        let toB = try net.link(b, a)
        let toC = try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, b, c])
        a.removePeerSecret(scope: .project(key: host.project.key))
        net.pump([a, b, c])
        #expect(toC.b?.state == .closed && toC.b?.closeReason?.hasPrefix("no longer shared") == true, "\(String(describing: toC.b?.closeReason))")
        #expect(toC.a?.state == .closed)
        #expect(toB.a?.state == .established && toB.b?.state == .established)
        #expect(!a.holdsPeerSecret(of: .project(key: host.project.key)))
        // C dials again with K's secret: A no longer holds it.
        let again = try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, b, c])
        #expect(again.b?.wasEstablished == false && again.b?.closeReason?.hasPrefix("authentication failed: wrong secret") == true)
    }

    @Test func aHandshakeUnderWayWhenItsSecretIsRemovedIsRefused() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let c = try host.projectPeer(300)
        let toC = try net.link(c, a, scope: .project(key: host.project.key))
        a.removePeerSecret(scope: .project(key: host.project.key))   // before any byte moved
        net.pump([a, c])
        #expect(toC.b?.wasEstablished == false)
        #expect(c.documents.isEmpty)
    }

    @Test func aDaemonWithOnlyProjectSecretsPeersInThoseScopesOnly() throws {
        let net = PeerTestNetwork()
        let one = try Self.project()
        let c = net.makeDaemon(300, secret: nil)
        #expect(throws: PeeringError.self) { try c.makePeerLink(write: { _ in }, close: {}, incoming: true) }
        try c.addPeerSecret(one.secret, scope: .project(key: one.key))
        // Incoming links are taken (the project's secret is tried); a general dial is not possible.
        _ = try c.makePeerLink(write: { _ in }, close: {}, incoming: true)
        do {
            _ = try c.makePeerLink(write: { _ in }, close: {}, incoming: false)
            Issue.record("a general dial without the general secret")
        } catch let error as PeeringError {
            #expect(error.description.hasPrefix("peering needs a shared secret"))
        }
        let unknown = DocumentScope.project(key: "00000000000000aa")
        do {
            _ = try c.makePeerLink(write: { _ in }, close: {}, incoming: false, scope: unknown)
            Issue.record("a dial with a secret not held")
        } catch let error as PeeringError {
            #expect(error.description == "no secret of project 00000000000000aa is held here (share or join the project first)")
        }
    }

    @Test func projectSecretsAreCheckedAndBounded() throws {
        let c = PeerTestNetwork().makeDaemon(300, secret: nil)
        let one = try Self.project(), two = try Self.project()
        #expect(throws: PeeringError.self) { try c.addPeerSecret(Array(one.secret.prefix(8)), scope: .project(key: one.key)) }
        do {
            try c.addPeerSecret(one.secret, scope: .project(key: two.key))
            Issue.record("a secret held under another project's key")
        } catch let error as PeeringError {
            #expect(error.description.contains("is not that project's secret"))
        }
        #expect(!c.holdsPeerSecret(of: .project(key: two.key)) && !c.holdsPeerSecret(of: .project(key: one.key)))
        for _ in 0..<PeerSecrets.maximumProjectSecrets {
            let next = try Self.project()
            try c.addPeerSecret(next.secret, scope: .project(key: next.key))
        }
        do {
            try c.addPeerSecret(one.secret, scope: .project(key: one.key))
            Issue.record("a 65th project secret")
        } catch let error as PeeringError {
            #expect(error.description.contains("already holds 64 project secrets"))
        }
        #expect(!c.holdsPeerSecret(of: .project(key: one.key)))
    }

    /// A restarted daemon set to wait for one configured peer (`--connect`, general) holds the
    /// reopen of a general document, but not of a project's: the configured peers never carry it.
    @Test func aProjectDocumentsReopenDoesNotWaitForTheGeneralConfiguredPeers() throws {
        let loop = ReopenWaitsTests.ManualLoop()
        let path = DaemonProcess.temporaryDirectory("scoped-reopen")
        let project = try Self.project()
        let uri = DocumentScope.projectURI(key: project.key, file: "f-1")
        let net = PeerTestNetwork()
        let b = net.makeDaemon(97_000)
        let c = net.makeDaemon(98_000, secret: nil)
        try c.addPeerSecret(project.secret, scope: .project(key: project.key))
        let inProject = TestEditor(daemon: c), general = TestEditor(daemon: c)   // reconnected below
        do {
            let a = net.makeDaemon(9_000, store: try TombstoneCompactionTests.store(path))
            try a.addPeerSecret(project.secret, scope: .project(key: project.key))
            try net.link(a, b)
            try net.link(a, c, scope: .project(key: project.key))
            for (editor, name, text) in [(inProject, uri, "project\n"), (general, "notes", "general\n")] {
                editor.connect(to: a)
                editor.initialize(user: "ann")
                editor.open(name, text: text)
            }
            net.pump([a, b, c])
            #expect(b.document("notes") != nil && c.document(uri) != nil, "both documents were shared")
            for editor in [inProject, general] {
                editor.connection.endOfInput()
                editor.disconnect()
            }
            for daemon in [a, b, c] { for link in daemon.links.values { link.close("shutting down") } }
        }
        let a = net.makeDaemon(9_100, store: try TombstoneCompactionTests.store(path))
        try a.addPeerSecret(project.secret, scope: .project(key: project.key))
        a.monotonicClock = { loop.now }
        a.waitForPeersBeforeReopens(configuredPeers: 1) { loop.schedule($0, $1) }
        for editor in [inProject, general] {
            editor.connect(to: a)
            editor.initialize(user: "ann")
        }
        #expect(general.reopen() == .null, "the general document waits for the configured peer")
        #expect(inProject.reopen()["result"]?["view"] != nil, "K's document is answered at once: no link of its scope is catching up")
    }

    @Test func peerStatusShowsEachLinksScope() throws {
        let host = try Host()
        let (net, a) = (host.net, host.a)
        let b = net.makeDaemon(200), c = try host.projectPeer(300)
        try net.link(b, a)
        try net.link(c, a, scope: .project(key: host.project.key))
        net.pump([a, b, c])
        let links = host.general.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        #expect(links.map { $0["scope"] } == [.string("general"), .string("project \(host.project.key)")], "\(links)")
    }
}

/// The secure channel with several secrets on the accepting side (protocol/peer.md, *Handshake*,
/// *Several secrets*), on its own: no daemon, no socket.
@Suite struct SeveralSecretsChannelTests {
    static let secrets = (0..<3).map { Array("secret number \($0) of the accepting side".utf8) }

    static func accepting(_ secrets: [[UInt8]], nonce: UInt8 = 2) -> SecureChannelTests.Side {
        SecureChannelTests.Side(SecureChannel(secrets: secrets, nonce: Array(repeating: nonce, count: 32), incoming: true, handshakeFrameBytes: 4096,
                                              peerFrameBytes: 1 << 20,
                                              credentials: { .init(replica: ReplicaID(2), user: "acceptor", identity: PeerIdentity()) }))
    }

    @Test(arguments: [0, 1, 2])
    func theConnectorsSecretIsFoundAmongThree(index: Int) {
        for chunk in [Int.max, 1] {
            let connector = SecureChannelTests.side(replica: 1, incoming: false, secret: Self.secrets[index], nonce: 1)
            let acceptor = Self.accepting(Self.secrets)
            SecureChannelTests.exchange(connector, acceptor, chunk: chunk)
            #expect(acceptor.established?.secretIndex == index && acceptor.channel.secretIndex == index, "chunk \(chunk)")
            #expect(connector.established?.secretIndex == 0 && connector.established?.replica == ReplicaID(2))
            // Sealed frames flow both ways under the chosen keys.
            let toAcceptor = connector.bytes(of: .heartbeat), toConnector = acceptor.bytes(of: .heartbeat)
            _ = SecureChannelTests.deliver(toAcceptor, to: acceptor, chunk: chunk)
            _ = SecureChannelTests.deliver(toConnector, to: connector, chunk: chunk)
            #expect(acceptor.delivered == [.heartbeat] && connector.delivered == [.heartbeat])
        }
    }

    @Test func aSecretTheAcceptorLacksFailsAsWithOneSecret() {
        let stranger = Array("a secret nobody else holds at all".utf8)
        let againstSeveral = SecureChannelTests.side(replica: 1, incoming: false, secret: stranger, nonce: 1)
        let several = Self.accepting(Self.secrets)
        SecureChannelTests.exchange(againstSeveral, several)
        let againstOne = SecureChannelTests.side(replica: 1, incoming: false, secret: stranger, nonce: 1)
        let one = Self.accepting([Self.secrets[0]])
        SecureChannelTests.exchange(againstOne, one)
        #expect(several.established == nil && one.established == nil)
        #expect(several.endReason?.hasPrefix("authentication failed: wrong secret") == true, "\(String(describing: several.endReason))")
        #expect(several.endReason == one.endReason && againstSeveral.endReason == againstOne.endReason)
        #expect(several.channel.secretIndex == nil)
    }

    @Test func aConnectorSpeaksWithItsFirstSecretOnly() {
        let connector = SecureChannelTests.Side(SecureChannel(secrets: [Self.secrets[1], Self.secrets[0]], nonce: Array(repeating: 1, count: 32),
                                                              incoming: false, handshakeFrameBytes: 4096, peerFrameBytes: 1 << 20,
                                                              credentials: { .init(replica: ReplicaID(1), user: "c", identity: PeerIdentity()) }))
        let acceptor = Self.accepting([Self.secrets[0]])
        SecureChannelTests.exchange(connector, acceptor)
        #expect(acceptor.established == nil && connector.channel.secretCount == 1)
    }
}
