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

    /// Three daemons of one project in a chain: the host (ann) shares it, the joiner (bob) links
    /// to the host, the third (cy) only to the joiner, so cy's presence reaches the host relayed.
    /// Everyone's cursor is in the project's `notes.txt`.
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
            wires = [try net.link(joiner, host, scope: .project(key: key)), try net.link(third, joiner, scope: .project(key: key))]
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

        /// The host's session of `ann`.
        var annSession: any EditorEndpoint {
            get throws { try #require(host.sessionRegistry.inOrder.first) }
        }

        /// The host's link to the joiner.
        var hostLink: any PeerEndpoint {
            get throws { try #require(host.links.values.first { $0.scope == .project(key: key) && $0.isEstablished }) }
        }
    }

    static func role(_ name: String, in people: [WhoRequest.Person]) -> String?? {
        people.first { $0.user.name == name }.map(\.role)
    }

    @Test func whoShowsOwnRoleTheDirectPeersKeyRoleAndNoneForARelayedEditor() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.own = .owner
        access.roles[chain.joiner.identity.publicKey] = .read
        access.roles[chain.third.identity.publicKey] = .write
        let who = WhoIsHere(documents: chain.host.registry, sessions: chain.host.sessionRegistry, links: chain.host.links, access: access)
        let people = who.people(for: try chain.annSession, encoding: .utf32)
        #expect(people.map(\.user.name) == ["ann", "bob", "cy"], "everyone's cursor reached the host: \(people)")
        #expect(Self.role("ann", in: people) == "owner", "this daemon's own role for its editors")
        #expect(Self.role("bob", in: people) == "read", "the role of the key of bob's daemon's own link")
        // Cy's presence came by the joiner's link: neither the joiner's role (read) nor a guess.
        #expect(Self.role("cy", in: people) == .some(nil), "no role for an editor whose presence a third daemon relayed")
        // The roster changes: the next answer follows it.
        access.roles[chain.joiner.identity.publicKey] = .write
        access.own = .read
        let again = who.people(for: try chain.annSession, encoding: .utf32)
        #expect(Self.role("bob", in: again) == "write" && Self.role("ann", in: again) == "read")
        // A key the roster does not name has no role.
        access.roles = [:]
        #expect(Self.role("bob", in: who.people(for: try chain.annSession, encoding: .utf32)) == .some(nil))
    }

    @Test func aPersonInADocumentSharedByNameHasNoRole() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.own = .owner
        chain.ann.open("scratch", text: "x\n")
        WhoTests.cursor(chain.ann, in: "scratch", line: 0, character: 1)
        let who = WhoIsHere(documents: chain.host.registry, sessions: chain.host.sessionRegistry, links: chain.host.links, access: access)
        let ann = try #require(who.people(for: try chain.annSession, encoding: .utf32).first { $0.user.name == "ann" })
        #expect(ann.at.first?.uri == "scratch" && ann.at.count == 2, "scratch is where she is now: \(ann.at)")
        #expect(ann.role == nil, "the general scope has no roles")
        #expect(ann.json["role"] == nil)
    }

    @Test func aLinksRoleIsItsPeerKeysInTheLinksProjectOnly() throws {
        let chain = try Chain()
        let access = FakeAccess(project: chain.key)
        access.roles[chain.joiner.identity.publicKey] = .read
        #expect(access.role(of: try chain.hostLink) == .read)
        let general = RecordingLink(id: 90, scope: .general)
        general.peerKey = chain.joiner.identity.publicKey
        #expect(access.role(of: general) == nil, "a link of the general scope has no role")
        let handshaking = RecordingLink(id: 91, scope: .project(key: chain.key))
        #expect(access.role(of: handshaking) == nil, "no role before the peer proved its key")
        let otherProject = RecordingLink(id: 92, scope: .project(key: "00000000000000ff"))
        otherProject.peerKey = chain.joiner.identity.publicKey
        #expect(access.role(of: otherProject) == nil, "the role is the key's in the link's own project")
    }

    /// Through the protocol, with the daemon's own roster: each value is what the roster says
    /// (whatever it says: owner for the sharer, the invitation's role for a joiner).
    @Test func whoAndPeerStatusCarryTheRostersRoles() throws {
        let chain = try Chain()
        let roster = chain.host.projects
        let people = chain.ann.request("quire/who")["result"]?["people"]?.arrayValue ?? []
        let annRole = try #require(roster.ownRole(inProject: chain.key)?.rawValue)
        let bobRole = try #require(roster.role(ofPeerKey: chain.joiner.identity.publicKey, inProject: chain.key)?.rawValue)
        #expect(WhoTests.person("ann", in: people)?["role"] == .string(annRole))
        #expect(WhoTests.person("bob", in: people)?["role"] == .string(bobRole))
        #expect(WhoTests.person("cy", in: people) != nil && WhoTests.person("cy", in: people)?["role"] == nil)

        let links = chain.ann.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        let projectLink = try #require(links.first { $0["scope"] == .string("project \(chain.key)") }, "\(links)")
        #expect(projectLink["role"] == .string(bobRole))
        // The joiner sees the host's role, the third (relayed past it) is its own link's peer.
        let joinerLinks = chain.bob.request("peer/status")["result"]?["links"]?.arrayValue ?? []
        let toHost = try #require(joinerLinks.first { $0["fingerprint"] == .string(chain.host.identity.fingerprint) })
        let hostRole = chain.joiner.projects.role(ofPeerKey: chain.host.identity.publicKey, inProject: chain.key)?.rawValue
        #expect(hostRole != nil && toHost["role"] == hostRole.map(JSONValue.string))
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
