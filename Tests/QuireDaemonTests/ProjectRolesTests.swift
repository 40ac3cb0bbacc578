import Crypto
import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// Roles on real daemons over loopback TCP (protocol/decisions/roles.md): an owner shares, a
/// writer joins from the share line, a reader from a read invitation, a stranger holding the
/// member secret is refused; the roster converges on every daemon, role changes and revocations
/// reach live links, invitations are used up or expire, a member comes back after a restart with
/// the member secret, and the roster is kept.
@Suite(.serialized) struct ProjectRolesTests {
    static func folder(_ name: String) throws -> String {
        try ProjectFixture.folder(["README.md": Array("# roles\n".utf8), "src/a.swift": Array("let a = 1\n".utf8)], name: name)
    }

    /// ann shares and owns; bob joins from the share line (write); cat from a read invitation.
    /// Returns once every daemon's roster names all three.
    static func team(_ label: String) throws -> (ann: RosterNode, bob: RosterNode, cat: RosterNode, key: String, line: JSONValue) {
        let ann = try RosterNode(1_000, user: "ann"), bob = try RosterNode(2_000, user: "bob"), cat = try RosterNode(3_000, user: "cat")
        let shared = try ann.share(try folder(label))
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        let invited = ann.request("project/invite", ["key": .string(key), "role": "read"])
        let readLine = try #require(invited["result"]?["line"], "\(invited)")
        #expect(invited["result"]?["role"] == "read" && invited["result"]?["once"] == false)
        #expect(bob.join(line)["result"] != nil)
        #expect(cat.join(readLine)["result"] != nil)
        let converged = waitUntil(timeout: 30) {
            [ann, bob, cat].allSatisfy { node in node.roster(key)?.roles.count == 3 }
        }
        #expect(converged, "rosters: \([ann, bob, cat].map { $0.roster(key)?.roles.count ?? -1 }); ann's log: \(ann.log.all.suffix(8))")
        return (ann, bob, cat, key, line)
    }

    @Test func anOwnerAWriterAReaderAndAStranger() throws {
        let (ann, bob, cat, key, line) = try Self.team("team")
        defer { for node in [ann, bob, cat] { node.stop() } }
        // The roster converged: the same signed changes and the same roles on every daemon.
        let changes = ann.roster(key)?.changes
        #expect(bob.roster(key)?.changes == changes && cat.roster(key)?.changes == changes)
        for node in [ann, bob, cat] {
            #expect(node.role(of: ann, in: key) == .owner && node.role(of: bob, in: key) == .write && node.role(of: cat, in: key) == .read,
                    "\(node.user)'s roster")
        }
        #expect(ann.ownRole(key) == .owner && bob.ownRole(key) == .write && cat.ownRole(key) == .read)
        // The invitations' members now link with the member secret (it came over the link).
        #expect(waitUntil(timeout: 10) { [bob, cat].allSatisfy { $0.project(key) { $0?.redeeming == false } == true } })
        #expect(bob.project(key) { $0.map { DocumentScope.projectKey(secret: $0.secret) } } ?? nil == key)
        // The files reached the members once they were admitted.
        #expect(waitUntil(timeout: 30) { bob.project(key) { $0?.view.paths.count } == 2 && cat.project(key) { $0?.view.paths.count } == 2 })
        // project/members on the owner: owners, writers, readers, each with the name it linked with.
        let members = try #require(ann.request("project/members", ["key": .string(key)])["result"]?["members"]?.arrayValue)
        #expect(members.map { $0["name"]?.stringValue ?? "?" } == ["ann", "bob", "cat"], "\(members)")
        #expect(members.map { $0["role"]?.stringValue ?? "-" } == ["owner", "write", "read"])
        #expect(members.map { $0["you"] == true } == [true, false, false])
        #expect(members.allSatisfy { $0["online"] == true })
        // Only an owner invites, changes roles and revokes.
        for (method, params) in [("project/invite", ["key": JSONValue.string(key), "role": "read"]),
                                 ("project/role", ["key": .string(key), "member": "cat", "role": "write"]),
                                 ("project/revoke", ["key": .string(key), "member": "ann"])] {
            let refused = bob.request(method, .object(params))
            #expect(refused["error"]?["code"] == -32602, "\(method): \(refused)")
            #expect(refused["error"]?["message"]?.stringValue?.contains("only an owner of project team") == true, "\(method): \(refused)")
            #expect(refused["error"]?["message"]?.stringValue?.contains("a writer") == true, "\(refused)")
        }
        #expect(cat.request("project/invite", ["key": .string(key), "role": "write"])["error"]?["message"]?.stringValue?.contains("a reader") == true)
        #expect(ann.roster(key)?.changes == changes, "nothing changed")
        // A stranger holding the member secret (not an invitation's) is refused after the handshake.
        let eve = try RosterNode(4_000, user: "eve")
        defer { eve.stop() }
        let shareLine = try JoinLine(parsing: try #require(line.stringValue))
        let memberSecret = try #require(ann.project(key) { $0?.secret } ?? nil)
        let strangerLine = try JoinLine(name: shareLine.name, addresses: shareLine.addresses, secret: memberSecret, fingerprint: shareLine.fingerprint)
        #expect(eve.join(.string(strangerLine.encoded))["result"] != nil)
        var removed: [JSONValue] = []
        #expect(waitUntil(timeout: 20) { removed += eve.take("project/removed"); return !removed.isEmpty })
        #expect(removed.first?["params"]?["reason"]?.stringValue == "not a member of project team", "\(removed)")
        #expect(eve.project(key) { $0?.active } == false, "a refused daemon stops dialing")
        #expect(ann.role(of: eve, in: key) == nil && ann.roster(key)?.changes == changes)
    }

    @Test func aRoleChangeAndARevocationTakeEffectOnLiveLinks() throws {
        let (ann, bob, cat, key, line) = try Self.team("live")
        defer { for node in [ann, bob, cat] { node.stop() } }
        #expect(waitUntil(timeout: 10) { cat.links(key).count == 1 && ann.links(key).count == 2 })
        let catsLink = cat.links(key)
        // cat becomes a writer: every daemon knows it, on the link that was up.
        let changed = ann.request("project/role", ["key": .string(key), "member": "cat", "role": "write"])
        #expect(changed["result"]?["role"] == "write" && changed["result"]?["name"] == "cat", "\(changed)")
        #expect(waitUntil(timeout: 10) { cat.ownRole(key) == .write && bob.role(of: cat, in: key) == .write })
        #expect(cat.links(key) == catsLink, "the same live link")
        // bob is revoked, named by the start of his fingerprint: his link is cut at once, he is told once.
        let fingerprint = PeerIdentity.fingerprint(ofPublicKey: bob.publicKey)
        let revoked = ann.request("project/revoke", ["key": .string(key), "member": .string(String(fingerprint.prefix(9)).uppercased())])
        #expect(revoked["result"]?["fingerprint"]?.stringValue == fingerprint && revoked["result"]?["role"] == nil, "\(revoked)")
        var removed: [JSONValue] = []
        #expect(waitUntil(timeout: 10) { removed += bob.take("project/removed"); return !removed.isEmpty && ann.links(key).count == 1 })
        #expect(removed.count == 1 && removed.first?["params"]?["reason"]?.stringValue == "removed from project live by an owner", "\(removed)")
        #expect(bob.links(key).isEmpty && bob.project(key) { $0?.active } == false)
        #expect(bob.roster(key)?.removed.contains(MemberKey(bob.publicKey)!) == true, "bob learnt it from the signed change")
        #expect(waitUntil(timeout: 10) { cat.role(of: bob, in: key) == nil && cat.roster(key) == ann.roster(key) })
        #expect(cat.links(key) == catsLink)
        // bob cannot link again: the share line was withdrawn with his removal (HostileRosterTests),
        // and the member secret he holds links him only to be told he was removed.
        let shareLine = try JoinLine(parsing: try #require(line.stringValue))
        let memberSecret = try #require(ann.project(key) { $0?.secret } ?? nil)
        let memberLine = try JoinLine(name: shareLine.name, addresses: shareLine.addresses, secret: memberSecret, fingerprint: shareLine.fingerprint)
        #expect(ann.project(key) { $0?.invitations.isEmpty } == true)
        #expect(bob.join(.string(memberLine.encoded))["result"] != nil)
        var again: [JSONValue] = []
        #expect(waitUntil(timeout: 20) { again += bob.take("project/removed"); return !again.isEmpty })
        #expect(again.first?["params"]?["reason"]?.stringValue == "removed from project live by an owner", "\(again)")
        #expect(ann.role(of: bob, in: key) == nil && ann.links(key).count == 1)
        // Members named wrongly get a clear error listing who there is.
        let unknown = ann.request("project/role", ["key": .string(key), "member": "zed", "role": "read"])
        #expect(unknown["error"]?["code"] == -32602)
        #expect(unknown["error"]?["message"]?.stringValue?.contains("no member of project live is named zed") == true, "\(unknown)")
        #expect(unknown["error"]?["message"]?.stringValue?.contains("cat (") == true)
    }

    @Test func aOnceInvitationAdmitsOneKeyAndAnExpiredOneIsRefused() throws {
        let ann = try RosterNode(5_000, user: "ann"), bob = try RosterNode(6_000, user: "bob")
        let cat = try RosterNode(7_000, user: "cat"), dan = try RosterNode(8_000, user: "dan")
        defer { for node in [ann, bob, cat, dan] { node.stop() } }
        let key = try #require(try ann.share(try Self.folder("once"))["key"]?.stringValue)
        let once = try #require(ann.request("project/invite", ["key": .string(key), "role": "read", "once": true])["result"])
        #expect(once["once"] == true && once["expires"] == nil)
        #expect(bob.join(try #require(once["line"]))["result"] != nil)
        #expect(waitUntil(timeout: 20) { bob.ownRole(key) == .read && bob.project(key) { $0?.redeeming } == false })
        #expect(ann.project(key) { $0?.invitations.map(\.standing) } == [true], "the used invitation is gone")
        // A second key with the same line: the secret opens nothing any more.
        #expect(cat.join(try #require(once["line"]))["result"] != nil)
        #expect(waitUntil(timeout: 20) { cat.log.all.contains { $0.contains("authentication failed") } }, "\(cat.log.all.suffix(5))")
        #expect(ann.role(of: cat, in: key) == nil && cat.roster(key) == nil)
        // An invitation past its expiry is refused with a reason, and dropped.
        let expiring = try #require(ann.request("project/invite", ["key": .string(key), "role": "write", "expiresIn": 60])["result"])
        #expect(expiring["expires"]?.integerValue != nil)
        try ann.run { daemon in daemon.projects.now = { Double(time(nil)) + 3_600 } }
        #expect(dan.join(try #require(expiring["line"]))["result"] != nil)
        var removed: [JSONValue] = []
        #expect(waitUntil(timeout: 20) { removed += dan.take("project/removed"); return !removed.isEmpty })
        #expect(removed.first?["params"]?["reason"]?.stringValue?.contains("invitation to project once has expired") == true, "\(removed)")
        #expect(ann.role(of: dan, in: key) == nil && ann.project(key) { $0?.invitations.count } == 1)
    }

    @Test func aMemberComesBackAfterARestartWithTheMemberSecretAndTheRosterIsKept() throws {
        let ann = try RosterNode(9_000, user: "ann"), bob = try RosterNode(10_000, user: "bob")
        defer { ann.stop() }
        let key = try #require(try ann.share(try Self.folder("restart"))["key"]?.stringValue)
        let once = try #require(ann.request("project/invite", ["key": .string(key), "role": "write", "once": true])["result"]?["line"])
        #expect(bob.join(once)["result"] != nil)
        #expect(waitUntil(timeout: 20) { bob.ownRole(key) == .write && bob.project(key) { $0?.redeeming } == false && ann.links(key).count == 1 })
        let roster = try #require(ann.roster(key))
        bob.stop()
        #expect(waitUntil(timeout: 20) { ann.links(key).isEmpty })
        // bob's daemon starts again from its data directory: the invitation was used up, so only
        // the member secret it kept can bring it back.
        let bobAgain = try RosterNode(10_000, user: "bob", data: try bob.copyOfData())
        defer { bobAgain.stop() }
        #expect(bobAgain.roster(key) == roster, "bob's roster was kept")
        #expect(waitUntil(timeout: 30) { ann.links(key).count == 1 && bobAgain.links(key).count == 1 }, "\(bobAgain.log.all.suffix(5))")
        #expect(bobAgain.ownRole(key) == .write && ann.role(of: bobAgain, in: key) == .write)
        // The owner's roster survives its restart too (and is not taken for one from before roles).
        ann.stop()
        let annAgain = try RosterNode(9_000, user: "ann", data: try ann.copyOfData())
        defer { annAgain.stop() }
        #expect(annAgain.roster(key) == roster)
        #expect(annAgain.project(key) { $0?.memberSecretAdmits } == false)
        #expect(annAgain.ownRole(key) == .owner && annAgain.role(of: bobAgain, in: key) == .write)
        let mode = try FileManager.default.attributesOfItem(atPath: annAgain.data + "/projects/\(key)/roster")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aForgedOrAlteredRosterChangeCutsTheLink() throws {
        let root = try Self.folder("forged")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(11_000), joiner = net.makeDaemon(12_000)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]),
                                                   "directory": .string(DaemonProcess.temporaryDirectory("forged-join") + "/copy")])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        net.pump([host, joiner])
        let roster = try #require(host.projects.project(key: key)?.roster)
        #expect(roster.roles.count == 2 && joiner.projects.project(key: key)?.roster == roster)
        // bob (a writer) signs himself owner: the signature is his, but he never was an owner.
        let bobKey = try Curve25519.Signing.PrivateKey(rawRepresentation: joiner.identity.rawRepresentation)
        let forged = try RosterChange.signed(subject: MemberKey(joiner.identity.publicKey)!, role: .owner, counter: 9, projectKey: key, signer: bobKey)
        wire.a?.sendProjectFrame(key: key, payload: RosterPayload.roster(founder: roster.founder, changes: [forged]).encoded)
        net.pump([host, joiner])
        #expect(wire.b?.state == .closed && wire.b?.closeReason?.contains("never an owner") == true, "\(wire.b?.closeReason ?? "open")")
        #expect(host.projects.project(key: key)?.roster == roster, "nothing of it kept")
        // An owner's real change, altered on the way (its role byte): the signature fails.
        var copy = roster
        let real = try copy.change(MemberKey(Array(repeating: 7, count: 32))!, to: .read, signer: host.identity.privateKey)
        var altered = RosterPayload.roster(founder: roster.founder, changes: [real]).encoded
        let roleByte = 1 + 32 + 2 + 32   // tag, founder, version and count, subject
        #expect(altered[roleByte] == 1)
        altered[roleByte] = 2
        let again = try net.link(joiner, host, scope: .project(key: key))
        net.pump([host, joiner])
        #expect(again.b?.state == .established)
        again.a?.sendProjectFrame(key: key, payload: altered)
        net.pump([host, joiner])
        #expect(again.b?.closeReason?.contains("signature does not verify") == true, "\(again.b?.closeReason ?? "open")")
        #expect(host.projects.project(key: key)?.roster == roster)
        // A roster of another founder, and a member secret from a daemon that is no owner.
        let link = RecordingLink(id: 99, scope: .project(key: key))
        link.peerKey = joiner.identity.publicKey
        let otherFounder = RosterPayload.roster(founder: MemberKey(joiner.identity.publicKey)!, changes: []).encoded
        #expect(throws: (any Error).self) { try host.projects.receiveProjectFrame(key: key, payload: otherFounder, from: link) }
        let secret = try #require(host.projects.project(key: key)?.secret)
        #expect(throws: (any Error).self) {
            try joiner.projects.receiveProjectFrame(key: key, payload: RosterPayload.memberSecret(secret).encoded, from: RecordingLink(id: 98, scope: .project(key: key)))
        }
    }

    /// A project shared before roles (a record with no roster): loaded, its host founds the
    /// roster, and the line it gave out (the member secret's) keeps admitting new keys as writers.
    @Test func aProjectSharedBeforeRolesGetsARosterAndItsLineStillAdmits() throws {
        let root = try Self.folder("legacy")
        let data = DaemonProcess.temporaryDirectory("roster-legacy")
        var key = ""
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, _) = ProjectFixture.daemon(13_000, store: store)
            key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        }
        // The record as a Quire from before roles kept it: no founder, invitations or roster file.
        let record = data + "/projects/\(key)/project.json"
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: record))) as? [String: Any])
        for field in ["founder", "names", "invitations", "memberSecretAdmits", "redeeming", "pendingRole", "removed"] { json[field] = nil }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: record))
        try FileManager.default.removeItem(atPath: data + "/projects/\(key)/roster")
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, _) = ProjectFixture.daemon(13_000, store: store)
        let project = try #require(daemon.projects.project(key: key))
        #expect(project.roster?.founder == MemberKey(daemon.identity.publicKey) && project.memberSecretAdmits)
        #expect(daemon.projects.ownRole(inProject: key) == .owner)
        let line = try JoinLine(parsing: try #require(ProjectFixture.share(daemon, root: root)["result"]?["line"]?.stringValue))
        #expect(line.projectKey == nil && DocumentScope.projectKey(secret: line.secret) == key, "the line it always printed")
        let partner = try #require(MemberKey(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation.map { $0 }))
        let link = try ProjectFixture.link(to: daemon, key: key)
        link.peerKey = partner.bytes
        daemon.projects.projectLinkEstablished(link, key: key)
        #expect(link.closeReason == nil && daemon.projects.role(ofPeerKey: partner.bytes, inProject: key) == .write)
    }

    /// Every cut or changed roster payload decodes to something checked or is refused; none
    /// crashes or allocates past its bounds (a count beyond 4,096 changes is refused unread).
    @Test func damagedRosterPayloadsAreRefusedNotTrusted() throws {
        let owner = Curve25519.Signing.PrivateKey()
        let founder = try #require(MemberKey(Array(owner.publicKey.rawRepresentation)))
        var roster = ProjectRoster(projectKey: "3fa29c1b00d4e6f1", founder: founder)
        try roster.change(MemberKey(Array(repeating: 5, count: 32))!, to: .write, signer: owner)
        try roster.change(MemberKey(Array(repeating: 6, count: 32))!, to: nil, signer: owner)
        let payload = RosterPayload.roster(founder: founder, changes: roster.orderedChanges).encoded
        #expect(try RosterPayload.decode(payload) == .roster(founder: founder, changes: roster.orderedChanges))
        for length in 0..<payload.count {
            #expect(throws: (any Error).self, "cut at \(length)") { try RosterPayload.decode(Array(payload.prefix(length))) }
        }
        for index in payload.indices {
            var changed = payload
            changed[index] ^= 0x41
            // Either it does not decode, or it names another founder (refused as "a roster founded
            // by another key"), or what it decodes does not verify for this project.
            if case .roster(let named, let changes)? = try? RosterPayload.decode(changed), named == founder {
                var copy = ProjectRoster(projectKey: roster.projectKey, founder: founder)
                #expect(throws: (any Error).self, "byte \(index)") { try copy.apply(contentsOf: changes) }
            } else if case .roster(let named, _)? = try? RosterPayload.decode(changed) {
                #expect(named != founder && (1...32).contains(index))
            }
        }
        var huge = [RosterPayload.rosterTag] + founder.bytes + [RosterChange.binaryVersion]
        huge += [0x81, 0x80, 0x04]   // a count of 65,537
        #expect(throws: (any Error).self) { try RosterPayload.decode(huge) }
        #expect(try RosterPayload.decode(RosterPayload.refused("gone").encoded) == .refused("gone"))
        #expect(throws: (any Error).self) { try RosterPayload.decode([RosterPayload.secretTag, 4, 1, 2, 3, 4]) }
    }

    /// On the owner: a key redeeming the share line is signed in and told the roster and the
    /// member secret; each change tells the daemon the roles changed; a revocation sends the
    /// signed removal to the member's link before it cuts it.
    @Test func changesAreSentBeforeTheCutAndTellTheDaemon() throws {
        let (daemon, _) = ProjectFixture.daemon(14_000)
        let root = try Self.folder("order")
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        var told: [String] = []
        daemon.projects.rolesChanged = { told.append($0) }
        let project = try #require(daemon.projects.project(key: key))
        let standing = try #require(project.invitations.first)
        let member = Curve25519.Signing.PrivateKey()
        let link = try ProjectFixture.link(to: daemon, key: key)
        link.peerKey = Array(member.publicKey.rawRepresentation)
        link.peerUser = "dee\u{1B}[31m"
        link.secretTag = standing.tag
        daemon.projects.projectLinkEstablished(link, key: key)
        #expect(link.closeReason == nil && told == [key])
        let payloads = link.frames.compactMap { try? RosterPayload.decode($0.payload) }
        #expect(payloads.contains(.memberSecret(project.secret)))
        #expect(payloads.contains { if case .roster(_, let changes) = $0 { return changes.count == 1 } else { return false } })
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let members = editor.request("project/members", ["key": .string(key)])["result"]?["members"]?.arrayValue ?? []
        #expect(members.count == 2 && members.last?["name"]?.stringValue?.contains("\u{1B}") == false, "names are cleaned: \(members)")
        link.frames = []
        let revoked = editor.request("project/revoke", ["key": .string(key), "member": .string(PeerIdentity.fingerprint(ofPublicKey: link.peerKey ?? []))])
        #expect(revoked["result"]?["role"] == nil && revoked["result"] != nil, "\(revoked)")
        #expect(told == [key, key])
        let sent = link.frames.compactMap { try? RosterPayload.decode($0.payload) }
        guard sent.count == 2, case .roster(_, let changes) = sent[0], case .refused(let reason) = sent[1] else {
            Issue.record("the removal, then the refusal: \(sent)")
            return
        }
        #expect(changes.count == 1 && changes.first?.role == nil && reason == "removed from project order by an owner")
        #expect(link.closeReason == reason)
        let again = editor.request("project/revoke", ["key": .string(key), "member": .string(PeerIdentity.fingerprint(ofPublicKey: link.peerKey ?? []))])
        #expect(again["error"]?["message"]?.stringValue?.contains("removed from project order already") == true, "\(again)")
        let itself = editor.request("project/revoke", ["key": .string(key), "member": .string(daemon.identity.fingerprint)])
        #expect(itself["error"]?["message"]?.stringValue?.contains("cannot revoke itself") == true, "\(itself)")
    }
}
