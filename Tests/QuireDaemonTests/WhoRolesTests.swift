import Foundation
import JSON
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes

/// Roles shown (protocol/decisions/roles.md, *Roles shown*): `quire/who` gives each person their
/// role in the project of the document they are in now, and `peer/status` each project link the
/// role of the key its peer proved, both from what the project's roster allows (`ProjectAccess`);
/// a relayed editor and the general scope have none.
@Suite struct WhoRolesTests {
    /// A roster stand-in for one project: a role per peer key and this daemon's own.
    final class FakeAccess: ProjectAccess {
        let project: String
        var roles: [[UInt8]: ProjectRole] = [:]
        var own: ProjectRole?

        init(project: String) { self.project = project }

        func role(ofPeerKey peerKey: [UInt8], inProject projectKey: String) -> ProjectRole? {
            projectKey == project ? roles[peerKey] : nil
        }

        func ownRole(inProject projectKey: String) -> ProjectRole? { projectKey == project ? own : nil }
    }

    /// Three daemons of one project in a star: the host (ann) shares it, the joiner (bob) and the
    /// third (cy) each link to the host only (only the owner daemon that issued a line admits a
    /// new key by it), so cy's presence reaches bob relayed by the host. Everyone's cursor is in
    /// the project's `notes.txt`. The tests look from bob's daemon.
    struct Chain {
        let net = PeerTestNetwork()
        let host: Daemon, joiner: Daemon, third: Daemon
        let transports: [RecordingTransport]
        let ann: TestEditor, bob: TestEditor, cy: TestEditor
        let key: String
        let uri: String
        let wires: [PeerTestNetwork.Wire]

        init() throws {
            let root = try ProjectFixture.folder(["notes.txt": Array("one\ntwo\nthree\n".utf8)], name: "roles")
            host = net.makeDaemon(300)
            joiner = net.makeDaemon(400)
            third = net.makeDaemon(500)
            transports = [RecordingTransport(), RecordingTransport(), RecordingTransport()]
            for (daemon, transport) in zip([host, joiner, third], transports) { daemon.transport = transport }
            ann = TestEditor(daemon: host)
            bob = TestEditor(daemon: joiner)
            cy = TestEditor(daemon: third)
            ann.initialize(user: "ann", encodings: ["utf-32"])
            bob.initialize(user: "bob", encodings: ["utf-32"])
            cy.initialize(user: "cy", encodings: ["utf-32"])
            let shared = try #require(ann.request("project/share", ["root": .string(root)])["result"])
            key = try #require(shared["key"]?.stringValue)
            let line = try #require(shared["line"])
            let bobFolder = DaemonProcess.temporaryDirectory("roles-bob") + "/copy"
            let cyFolder = DaemonProcess.temporaryDirectory("roles-cy") + "/copy"
            #expect(bob.request("project/join", ["line": line, "directory": .string(bobFolder)])["result"] != nil)
            #expect(cy.request("project/join", ["line": line, "directory": .string(cyFolder)])["result"] != nil)
            wires = [try net.link(joiner, host, scope: .project(key: key)), try net.link(third, host, scope: .project(key: key))]
            let (net, host, joiner, third) = (net, host, joiner, third)
            #expect(ProjectPeerTests.settle(net, [host, joiner, third]) {
                ProjectFixture.read(bobFolder + "/notes.txt") != nil && ProjectFixture.read(cyFolder + "/notes.txt") != nil
            })
            let text: JSONValue = "one\ntwo\nthree\n"
            uri = try #require(ann.request("document/open", ["file": .string(root + "/notes.txt"), "text": text, "ifShared": true])["result"]?["uri"]?.stringValue)
            #expect(uri.hasPrefix("@"))
            for (editor, folder) in [(bob, bobFolder), (cy, cyFolder)] {
                #expect(editor.request("document/open", ["file": .string(folder + "/notes.txt"), "text": text, "ifShared": true])["result"]?["uri"]?.stringValue == uri)
            }
            for (editor, line) in [(ann, 0), (bob, 1), (cy, 2)] {
                WhoTests.cursor(editor, in: uri, line: line, character: 1)
            }
            net.pump([host, joiner, third])
            net.pump([host, joiner, third])
        }

        /// The joiner's session of `bob`.
        var bobSession: any EditorEndpoint {
            get throws { try #require(joiner.sessionRegistry.inOrder.first) }
        }

        /// The joiner's link to the host.
        var joinerLink: any PeerEndpoint {
            get throws { try #require(joiner.links.values.first { $0.scope == .project(key: key) && $0.isEstablished }) }
        }

        /// Who is here as bob's daemon sees it, with `access` for the roster.
        func people(_ access: any ProjectAccess) throws -> [WhoRequest.Person] {
            try WhoIsHere(documents: joiner.registry, sessions: joiner.sessionRegistry, links: joiner.links, access: access)
                .people(for: bobSession, encoding: .utf32)
        }
    }

    static func role(_ name: String, in people: [WhoRequest.Person]) -> String?? {
        people.first { $0.user.name == name }.map(\.role)
    }

    @Test func whoShowsOwnRoleTheDirectPeersKeyRoleAndNoneForARelayedEditor() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.own = .read
        access.roles[chain.host.identity.publicKey] = .owner
        access.roles[chain.third.identity.publicKey] = .write
        let people = try chain.people(access)
        #expect(people.map(\.user.name) == ["ann", "bob", "cy"], "everyone's cursor reached bob's daemon: \(people)")
        #expect(Self.role("bob", in: people) == "read", "this daemon's own role for its editors")
        #expect(Self.role("ann", in: people) == "owner", "the role of the key of ann's daemon's own link")
        // Cy's presence came by the host's link: neither the host's role (owner) nor a guess.
        #expect(Self.role("cy", in: people) == .some(nil), "no role for an editor whose presence a third daemon relayed")
        // The roster changes: the next answer follows it.
        access.roles[chain.host.identity.publicKey] = .write
        access.own = .write
        let again = try chain.people(access)
        #expect(Self.role("ann", in: again) == "write" && Self.role("bob", in: again) == "write")
        // A key the roster does not name has no role.
        access.roles = [:]
        #expect(Self.role("ann", in: try chain.people(access)) == .some(nil))
    }

    @Test func aPersonInADocumentSharedByNameHasNoRole() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.own = .write
        chain.bob.open("scratch", text: "x\n")
        WhoTests.cursor(chain.bob, in: "scratch", line: 0, character: 1)
        let bob = try #require(try chain.people(access).first { $0.user.name == "bob" })
        #expect(bob.at.first?.uri == "scratch" && bob.at.count == 2, "scratch is where he is now: \(bob.at)")
        #expect(bob.role == nil, "the general scope has no roles")
        #expect(bob.json["role"] == nil)
    }

    @Test func aLinksRoleIsItsPeerKeysInTheLinksProjectOnly() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.roles[chain.host.identity.publicKey] = .read
        #expect(access.role(of: try chain.joinerLink) == .read)
        let general = RecordingLink(id: 90, scope: .general)
        general.peerKey = chain.joiner.identity.publicKey
        #expect(access.role(of: general) == nil, "a link of the general scope has no role")
        let handshaking = RecordingLink(id: 91, scope: .project(key: chain.key))
        #expect(access.role(of: handshaking) == nil, "no role before the peer proved its key")
        let otherProject = RecordingLink(id: 92, scope: .project(key: "00000000000000ff"))
        otherProject.peerKey = chain.joiner.identity.publicKey
        #expect(access.role(of: otherProject) == nil, "the role is the key's in the link's own project")
    }

    /// Through the protocol, with the daemons' own rosters: each value is what the roster says
    /// (whatever it says: owner for the sharer, the line's role for a joiner).
    @Test func whoAndPeerStatusCarryTheRostersRoles() throws {
        let chain = try Chain()
        let roster = chain.joiner.projects
        let people = chain.bob.request("quire/who")["result"]?["people"]?.arrayValue ?? []
        let bobRole = try #require(roster.ownRole(inProject: chain.key)?.rawValue)
        let annRole = try #require(roster.role(ofPeerKey: chain.host.identity.publicKey, inProject: chain.key)?.rawValue)
        #expect(WhoTests.person("bob", in: people)?["role"] == .string(bobRole))
        #expect(WhoTests.person("ann", in: people)?["role"] == .string(annRole))
        #expect(WhoTests.person("cy", in: people) != nil && WhoTests.person("cy", in: people)?["role"] == nil, "\(people)")

        let links = chain.bob.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        let toHost = try #require(links.first { $0["scope"] == .string("project \(chain.key)") }, "\(links)")
        #expect(toHost["role"] == .string(annRole))
        // The host sees each joiner's key's role on its link.
        let hostLinks = chain.ann.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        for daemon in [chain.joiner, chain.third] {
            let link = try #require(hostLinks.first { $0["fingerprint"] == .string(daemon.identity.fingerprint) }, "\(hostLinks)")
            let role = try #require(chain.host.projects.role(ofPeerKey: daemon.identity.publicKey, inProject: chain.key)?.rawValue)
            #expect(link["role"] == .string(role))
        }
    }

    @Test func aGeneralLinkHasNoRoleInPeerStatus() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200)
        let ann = TestEditor(daemon: a)
        ann.initialize(user: "ann")
        try net.link(a, b)
        net.pump([a, b])
        let links = ann.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        #expect(links.count == 1 && links.first?["scope"] == "general" && links.first?["state"] == "established", "\(links)")
        #expect(links.first?["role"] == nil, "no role for the general scope, not even null")
    }
}
