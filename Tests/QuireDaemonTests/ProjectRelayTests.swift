import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// Sharing a project through a relay alone (protocol/decisions/roles.md, *Through a relay*): the
/// owner shares with `relay` and then stops listening (as if behind NAT), so a joiner can reach it
/// only through a real `quire relay`; the printed line and `project/invite` lines admit through
/// it, a used-up invitation pairs no one, and an admitted member (also after a restart) pairs
/// under the member secret's rendezvous.
@Suite(.serialized) struct ProjectRelayTests {
    static func folder(_ name: String) throws -> String {
        try ProjectFixture.folder(["README.md": Array("# relayed\n".utf8), "src/a.swift": Array("let a = 1\n".utf8)], name: name)
    }

    /// ann shares `label` with the relay at `port`, then stops listening: her line still names her
    /// address, which now refuses every connection. Returns the key and the printed line.
    static func shareThroughRelayOnly(_ ann: RosterNode, _ label: String, relayPort port: Int) throws -> (key: String, line: JSONValue) {
        let reply = ann.request("project/share", ["root": .string(try folder(label)), "listen": ["127.0.0.1:0"],
                                                  "relay": .string("127.0.0.1:\(port)")])
        let result = try #require(reply["result"], "\(reply)")
        let key = try #require(result["key"]?.stringValue)
        let ports = ann.project(key) { $0?.listeningPorts ?? [] } ?? []
        #expect(ports.count == 1)
        let transport = ann.transport
        _ = try ann.run { _ in ports.map { transport.stopListening(port: $0) } }
        #expect(try JoinLine(parsing: try #require(result["line"]?.stringValue)).relay?.description == "127.0.0.1:\(port)")
        return (key, try #require(result["line"]))
    }

    /// The addresses of `node`'s established links of project `key`.
    static func linkAddresses(_ node: RosterNode, _ key: String) -> [String] {
        (try? node.run { $0.links.values.filter { $0.isEstablished && $0.scope == .project(key: key) }.map(\.address) }) ?? []
    }

    /// The tags of the secrets `node`'s established links of project `key` were made with.
    static func linkSecretTags(_ node: RosterNode, _ key: String) -> [String?] {
        (try? node.run { $0.links.values.filter { $0.isEstablished && $0.scope == .project(key: key) }.map(\.secretTag) }) ?? []
    }

    static func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    @Test func theShareLineJoinsThroughTheRelayAloneAndEditsFlowBothWays() throws {
        let (relay, port) = try RelayProcessTests.relay()
        defer { RelayProcessTests.stop(relay) }
        let ann = try RosterNode(11_000, user: "ann"), bob = try RosterNode(12_000, user: "bob")
        defer { for node in [ann, bob] { node.stop() } }
        let (key, line) = try Self.shareThroughRelayOnly(ann, "relayed", relayPort: port)
        let joined = bob.join(line)
        let copy = try #require(joined["result"]?["directory"]?.stringValue, "\(joined)")
        #expect(waitUntil(timeout: 30) { bob.ownRole(key) == .write && bob.project(key) { $0?.redeeming } == false },
                "\(bob.log.all.suffix(8))")
        #expect(ann.role(of: bob, in: key) == .write)
        // The member then links again under the member secret's rendezvous, through the relay.
        let memberTag = try #require(ann.project(key) { PeerSecret.tag(of: $0?.secret ?? []) })
        #expect(waitUntil(timeout: 30) { Self.linkSecretTags(ann, key) == [memberTag] && Self.linkAddresses(bob, key).count == 1 },
                "\(Self.linkSecretTags(ann, key)); \(ann.log.all.suffix(8))")
        #expect(Self.linkAddresses(bob, key).allSatisfy { $0.hasPrefix("relay 127.0.0.1:") }, "\(Self.linkAddresses(bob, key))")
        #expect(Self.linkAddresses(ann, key).allSatisfy { $0.hasPrefix("relay 127.0.0.1:") })
        // The files arrive, and edits on disk flow both ways.
        #expect(waitUntil(timeout: 30) { Self.read(copy + "/src/a.swift") == "let a = 1\n" }, "\(bob.log.all.suffix(8))")
        let annRoot = try #require(ann.project(key) { $0?.root } ?? nil)
        try "let a = 2 // from ann\n".write(toFile: annRoot + "/src/a.swift", atomically: true, encoding: .utf8)
        #expect(waitUntil(timeout: 30) { Self.read(copy + "/src/a.swift") == "let a = 2 // from ann\n" })
        try "# relayed, and bob was here\n".write(toFile: copy + "/README.md", atomically: true, encoding: .utf8)
        #expect(waitUntil(timeout: 30) { Self.read(annRoot + "/README.md") == "# relayed, and bob was here\n" })
    }

    @Test func aOnceInvitationAdmitsOneKeyThroughTheRelayAndTheMemberComesBackAfterARestart() throws {
        // A short waiting time: a lone waiter is told `e` soon, which shows that nobody waits for it.
        let (relay, port) = try RelayProcessTests.relay(["--wait-timeout", "2"])
        defer { RelayProcessTests.stop(relay) }
        let ann = try RosterNode(13_000, user: "ann"), bob = try RosterNode(14_000, user: "bob"), cat = try RosterNode(15_000, user: "cat")
        defer { for node in [ann, cat] { node.stop() } }
        let (key, _) = try Self.shareThroughRelayOnly(ann, "relayonce", relayPort: port)
        let invited = ann.request("project/invite", ["key": .string(key), "role": "read", "once": true])
        let once = try #require(invited["result"]?["line"], "\(invited)")
        let tag = PeerSecret.tag(of: try JoinLine(parsing: try #require(once.stringValue)).secret)
        #expect(ann.project(key) { $0?.relayDialed.contains(tag) } == true, "ann waits at the relay with the new invitation")
        #expect(bob.join(once)["result"] != nil)
        #expect(waitUntil(timeout: 30) { bob.ownRole(key) == .read && bob.project(key) { $0?.redeeming } == false },
                "\(bob.log.all.suffix(8))")
        #expect(ann.role(of: bob, in: key) == .read)
        #expect(ann.project(key) { $0?.invitations.map(\.standing) } == [true], "the used invitation is gone")
        #expect(ann.project(key) { $0?.relayDialed.contains(tag) } == false, "and ann no longer waits with it")
        // A second key with the same line: nobody waits at the relay with that secret any more.
        #expect(cat.join(once)["result"] != nil)
        #expect(waitUntil(timeout: 30) { cat.log.all.contains { $0.contains("no partner came to the relay in time") } }, "\(cat.log.all.suffix(5))")
        #expect(ann.role(of: cat, in: key) == nil && cat.roster(key) == nil && cat.links(key).isEmpty)
        // bob restarts from his data directory: the invitation is gone, so only the member
        // secret's rendezvous brings him back, through the relay.
        let memberTag = try #require(ann.project(key) { PeerSecret.tag(of: $0?.secret ?? []) })
        #expect(waitUntil(timeout: 30) { Self.linkSecretTags(ann, key) == [memberTag] }, "\(Self.linkSecretTags(ann, key))")
        bob.stop()
        #expect(waitUntil(timeout: 30) { ann.links(key).isEmpty })
        let bobAgain = try RosterNode(14_000, user: "bob", data: try bob.copyOfData())
        defer { bobAgain.stop() }
        #expect(waitUntil(timeout: 30) { Self.linkSecretTags(ann, key) == [memberTag] && bobAgain.links(key).count == 1 },
                "\(bobAgain.log.all.suffix(8))")
        #expect(Self.linkAddresses(bobAgain, key).allSatisfy { $0.hasPrefix("relay 127.0.0.1:") })
        #expect(bobAgain.ownRole(key) == .read && ann.role(of: bobAgain, in: key) == .read)
    }

    @Test func anExpiringInvitationThroughTheRelayIsRefusedWithItsReasonOnceExpired() throws {
        let (relay, port) = try RelayProcessTests.relay()
        defer { RelayProcessTests.stop(relay) }
        let ann = try RosterNode(16_000, user: "ann"), dan = try RosterNode(17_000, user: "dan")
        defer { for node in [ann, dan] { node.stop() } }
        let (key, _) = try Self.shareThroughRelayOnly(ann, "relayexpiry", relayPort: port)
        let expiring = try #require(ann.request("project/invite", ["key": .string(key), "role": "write", "expiresIn": 60])["result"])
        try ann.run { daemon in daemon.projects.now = { Double(time(nil)) + 3_600 } }
        #expect(dan.join(try #require(expiring["line"]))["result"] != nil)
        var removed: [JSONValue] = []
        #expect(waitUntil(timeout: 30) { removed += dan.take("project/removed"); return !removed.isEmpty }, "\(dan.log.all.suffix(5))")
        #expect(removed.first?["params"]?["reason"]?.stringValue?.contains("has expired") == true, "\(removed)")
        #expect(ann.role(of: dan, in: key) == nil && ann.project(key) { $0?.invitations.count } == 1)
        #expect(ann.project(key) { $0?.relayDialed.count } == 2, "the member secret and the standing invitation")
    }
}
