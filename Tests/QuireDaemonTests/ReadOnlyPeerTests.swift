import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// A stand-in for the project service's rosters (`ProjectAccess`): this daemon's own role per
/// project, and the role of each peer key in every project this daemon has a role in.
final class FakeProjectAccess: ProjectAccess {
    var own: [String: ProjectRole] = [:]
    var peers: [[UInt8]: ProjectRole] = [:]

    func role(ofPeerKey peerKey: [UInt8], inProject projectKey: String) -> ProjectRole? {
        own[projectKey] == nil ? nil : peers[peerKey]
    }

    func ownRole(inProject projectKey: String) -> ProjectRole? { own[projectKey] }
}

/// Roles on the data path (protocol/decisions/roles.md, *Enforcement*; protocol/peer.md,
/// *Roles*): what a peer whose key may not write sends of a project's documents is not applied
/// and not relayed, so it reaches no daemon further along a chain; a writer's is; presence flows
/// from both; the reader is not cut.
@Suite struct ReadOnlyPeerTests {
    /// Project K and four daemons holding only its secret: the owner O, the middle M (which
    /// holds the roster that names R a reader and W a writer), the reader R and the writer W,
    /// linked R-M, W-M and M-O. O and M check roles (`FakeProjectAccess`); R and W hold no
    /// roster (as a modified daemon would not), so R's editor edits freely there.
    final class Chain {
        let net = PeerTestNetwork()
        let key: String
        let secret: [UInt8]
        let o: Daemon, m: Daemon, r: Daemon, w: Daemon
        let onM = FakeProjectAccess(), onO = FakeProjectAccess()
        let mLog = LogCapture()
        var wires: [PeerTestNetwork.Wire] = []
        var uri: String { DocumentScope.projectURI(key: key, file: "f-1") }
        var all: [Daemon] { [o, m, r, w] }

        init() throws {
            (secret, key) = try ScopedSharingTests.project()
            o = net.makeDaemon(100, secret: nil)
            m = net.makeDaemon(200, secret: nil, log: mLog)
            r = net.makeDaemon(300, secret: nil)
            w = net.makeDaemon(400, secret: nil)
            for daemon in all { try daemon.addPeerSecret(secret, scope: .project(key: key)) }
            onM.own[key] = .owner
            onM.peers = [Self.key(of: r): .read, Self.key(of: w): .write, Self.key(of: o): .owner]
            onO.own[key] = .owner
            onO.peers = [Self.key(of: m): .owner]
            m.projectAccess = onM
            o.projectAccess = onO
        }

        static func key(of daemon: Daemon) -> [UInt8] { daemon.local.identity.publicKey }

        func linkAll() throws {
            wires.append(try net.link(m, o, scope: .project(key: key)))
            wires.append(try net.link(r, m, scope: .project(key: key)))
            wires.append(try net.link(w, m, scope: .project(key: key)))
            pump()
        }

        func pump() {
            net.pump(all)
            for _ in 0..<3 {
                for daemon in all { daemon.tickPeers(now: 1, interval: 5) }
                net.pump(all)
            }
        }

        func text(on daemon: Daemon, _ uri: String? = nil) -> String? { daemon.document(uri ?? self.uri)?.text.string }

        /// Every link still up: a reader is refused, never cut.
        var linksUp: Bool { wires.allSatisfy { $0.a?.state == .established && $0.b?.state == .established } }

        func refusalsLogged(of uri: String) -> Int {
            mLog.all.filter { $0.contains("not applied nor relayed") && $0.contains(uri) }.count
        }
    }

    static func editor(_ user: String, on daemon: Daemon, _ uri: String, text: String) -> TestEditor {
        let editor = TestEditor(daemon: daemon)
        editor.initialize(user: user)
        editor.open(uri, text: text)
        return editor
    }

    @Test func aReadersOperationsReachNoDaemonAlongTheChainAndAWritersDo() throws {
        let chain = try Chain()
        let ann = Self.editor("ann", on: chain.o, chain.uri, text: "shared text\n")
        try chain.linkAll()
        #expect(chain.linksUp)
        for daemon in chain.all { #expect(chain.text(on: daemon) == "shared text\n", "everyone reads it, the reader too") }

        let rex = Self.editor("rex", on: chain.r, chain.uri, text: "shared text\n")
        let wes = Self.editor("wes", on: chain.w, chain.uri, text: "shared text\n")
        rex.edit(0..<0, with: "R1 ")
        chain.pump()
        rex.edit(0..<0, with: "R2 ")
        chain.pump()
        #expect(chain.text(on: chain.r) == "R2 R1 shared text\n", "R's own daemon holds no roster: it took the edits")
        #expect(chain.text(on: chain.m) == "shared text\n", "M refused the reader's operations")
        #expect(chain.text(on: chain.o) == "shared text\n", "so O, one link further, never saw them")
        #expect(chain.text(on: chain.w) == "shared text\n")
        #expect(chain.refusalsLogged(of: chain.uri) == 1, "logged once per link and document, not per frame: \(chain.mLog.all)")

        wes.edit(0..<0, with: "W ")
        chain.pump()
        for daemon in [chain.m, chain.o] { #expect(chain.text(on: daemon) == "W shared text\n", "the writer's edit went in and on") }
        let onR = chain.text(on: chain.r) ?? ""
        #expect(["R1 ", "R2 ", "W "].allSatisfy(onR.contains) && onR.hasSuffix("shared text\n"),
                "the reader still reads what others write: \(onR)")
        #expect(chain.linksUp, "a reader is refused, never cut")
        withExtendedLifetime([ann, rex, wes]) {}
    }

    @Test func aReadersCursorStillReachesEveryone() throws {
        let chain = try Chain()
        let ann = Self.editor("ann", on: chain.o, chain.uri, text: "shared text\n")
        try chain.linkAll()
        let rex = Self.editor("rex", on: chain.r, chain.uri, text: "shared text\n")
        ScopedSharingTests.moveCursor(rex, to: 4)
        chain.r.endRead()
        chain.pump()
        for daemon in [chain.m, chain.o] {
            let names = daemon.document(chain.uri)?.peerPresences.values.map(\.selection.user.name) ?? []
            #expect(names.contains("rex"), "the reader's cursor reached \(daemon.replica): \(names)")
        }
        withExtendedLifetime([ann, rex]) {}
    }

    @Test func aReadersNewDocumentIsNotTakenAndAWritersIs() throws {
        let chain = try Chain()
        let ann = Self.editor("ann", on: chain.o, chain.uri, text: "shared text\n")
        try chain.linkAll()
        let mine = DocumentScope.projectURI(key: chain.key, file: "f-r")
        let theirs = DocumentScope.projectURI(key: chain.key, file: "f-w")
        let rex = Self.editor("rex", on: chain.r, mine, text: "the reader's own file\n")
        let wes = Self.editor("wes", on: chain.w, theirs, text: "the writer's own file\n")
        chain.pump()
        #expect(chain.r.document(mine) != nil)
        #expect(chain.m.document(mine) == nil && chain.o.document(mine) == nil, "no copy of a reader's document is made")
        #expect(chain.text(on: chain.m, theirs) == "the writer's own file\n" && chain.text(on: chain.o, theirs) == "the writer's own file\n")
        #expect(chain.text(on: chain.r, theirs) == "the writer's own file\n", "and the reader gets the writer's")
        #expect(chain.linksUp)
        withExtendedLifetime([ann, rex, wes]) {}
    }

    /// A document that dropped tombstones travels as one whole state: from a reader it is not
    /// adopted (nor passed on), from a writer it is.
    @Test func aReadersWholeStateIsNotAdoptedAndAWritersIs() throws {
        let chain = try Chain()
        let compacted = DocumentScope.projectURI(key: chain.key, file: "f-c")
        for daemon in [chain.r, chain.w] {
            let editor = Self.editor("ed", on: daemon, compacted, text: "")
            editor.edit(0..<0, with: "hello there world\n")
            editor.edit(6..<12, with: "")   // "there "
            #expect(editor.request("document/close", ["uri": .string(compacted)])["result"] != nil)
            let document = try #require(daemon.document(compacted))
            daemon.dropTombstones(of: document)
            #expect(document.text.scalars.compactedCount > 0, "it can only travel whole")
        }
        // First the reader alone: M lacks the document and the reader sends its state.
        chain.wires.append(try chain.net.link(chain.m, chain.o, scope: .project(key: chain.key)))
        chain.wires.append(try chain.net.link(chain.r, chain.m, scope: .project(key: chain.key)))
        chain.pump()
        #expect(chain.m.document(compacted) == nil && chain.o.document(compacted) == nil, "a reader's state is not adopted")
        #expect(chain.refusalsLogged(of: compacted) == 1, "\(chain.mLog.all)")
        // Then the writer's copy (another document of the same name): taken and passed on.
        chain.wires.append(try chain.net.link(chain.w, chain.m, scope: .project(key: chain.key)))
        chain.pump()
        #expect(chain.text(on: chain.m, compacted) == "hello world\n" && chain.text(on: chain.o, compacted) == "hello world\n")
        #expect(chain.m.document(compacted)?.id == chain.w.document(compacted)?.id)
        #expect(chain.linksUp)
    }

    /// A role is asked of the roster at each frame: a reader made a writer is taken from its
    /// next frame on (what it sent before stays refused until the repair sends it again).
    @Test func aReaderMadeWriterIsTakenFromThenOn() throws {
        let chain = try Chain()
        let ann = Self.editor("ann", on: chain.o, chain.uri, text: "shared text\n")
        try chain.linkAll()
        let rex = Self.editor("rex", on: chain.r, chain.uri, text: "shared text\n")
        rex.edit(0..<0, with: "before ")
        chain.pump()
        #expect(chain.text(on: chain.o) == "shared text\n")
        chain.onM.peers[Chain.key(of: chain.r)] = .write
        rex.edit(0..<0, with: "after ")
        chain.pump()
        // The repair (digests at every tick) brings what was refused before as well.
        for _ in 0..<6 {
            for daemon in chain.all { daemon.tickPeers(now: 1, interval: 5) }
            chain.net.pump(chain.all)
        }
        #expect(chain.text(on: chain.o) == "after before shared text\n", "\(chain.text(on: chain.o) ?? "nil")")
        withExtendedLifetime([ann, rex]) {}
    }

    @Test func theGeneralScopeHasNoRoles() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let access = FakeProjectAccess()
        access.own["0123456789abcdef"] = .owner   // a project where B would have no role
        a.projectAccess = access
        let ann = Self.editor("ann", on: a, "notes", text: "general\n")
        try net.link(b, a)
        net.pump([a, b])
        let bob = Self.editor("bob", on: b, "notes", text: "general\n")
        bob.edit(0..<0, with: "B ")
        net.pump([a, b])
        #expect(a.document("notes")?.text.string == "B general\n")
        withExtendedLifetime([ann, bob, access]) {}
    }

    /// A shared folder joined by a reader: what the reader's disk changes (a file edited, a
    /// file added) does not reach the owner, whose files stay as they were; the owner's edits
    /// still reach the reader's disk.
    @Test func aReadersTreeAndFileChangesDoNotReachTheOwner() throws {
        let root = try ProjectFixture.folder(["main.swift": Array("print(1)\n".utf8)], name: "watched")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(300), joiner = net.makeDaemon(400)
        let transports = [RecordingTransport(), RecordingTransport()]
        host.transport = transports[0]
        joiner.transport = transports[1]
        let ann = TestEditor(daemon: host), bob = TestEditor(daemon: joiner)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        let reply = ann.request("project/share", ["root": .string(root)])
        let shared = try #require(reply["result"], "\(reply)")
        let key = try #require(shared["key"]?.stringValue)
        let access = FakeProjectAccess()
        access.own[key] = .owner
        access.peers[joiner.local.identity.publicKey] = .read
        host.projectAccess = access
        let directory = DaemonProcess.temporaryDirectory("project-reader") + "/copy"
        _ = bob.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/main.swift") == "print(1)\n" })

        try ProjectFixture.write(Array("print(2)\n".utf8), to: directory + "/main.swift")
        try ProjectFixture.write(Array("new\n".utf8), to: directory + "/added.swift")
        for project in joiner.projects.projects.values { project.needsScan = true }
        let reached = ProjectPeerTests.settle(net, [host, joiner]) {
            ProjectFixture.read(root + "/main.swift") == "print(2)\n" || FileManager.default.fileExists(atPath: root + "/added.swift")
        }
        #expect(!reached, "the reader's changes stay on the reader's side")
        #expect(host.projects.project(key: key)?.tree.fileCount == 1, "no file added to the owner's tree")
        #expect(wire.a?.state == .established && wire.b?.state == .established, "the reader is not cut")

        // The owner's edit still reaches the reader's copy.
        let opened = ann.request("document/open", ["file": .string(root + "/main.swift"), "text": "print(1)\n", "ifShared": true])
        ann.uri = try #require(opened["result"]?["uri"]?.stringValue)
        ann.text = Array("print(1)\n".unicodeScalars)
        _ = ann.edit(0..<0, with: "// owner\n")
        // (The joiner's own daemon, which holds no roster here, took its disk's change itself.)
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { joiner.document(ann.uri)?.text.string.hasPrefix("// owner\nprint(") == true },
                "\(joiner.document(ann.uri)?.text.string ?? "nil")")
        withExtendedLifetime((access, transports)) {}
    }
}
