import Crypto
import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// Roles attacked (protocol/decisions/roles.md): a member that turns hostile after it was
/// removed, a stranger holding a line it should not have, and what the owner keeps on disk.
@Suite(.serialized) struct HostileRosterTests {
    static func folder(_ name: String) throws -> String {
        try ProjectFixture.folder(["README.md": Array("# hostile\n".utf8)], name: name)
    }

    /// bob joins from the share line and is revoked; he still holds the line, so he makes a
    /// fresh identity key (a new data directory) and joins with it again. The line was withdrawn
    /// with his removal: the handshake fails and the owner's roster does not name the new key.
    /// Sharing again prints a fresh line, which admits a new member.
    @Test func aRevokedMemberCannotComeBackUnderAFreshKeyWithTheLineItHeld() throws {
        let ann = try RosterNode(21_000, user: "ann"), bob = try RosterNode(22_000, user: "bob")
        defer { for node in [ann, bob] { node.stop() } }
        let root = try Self.folder("fresh-key")
        let shared = try ann.share(root)
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        let reading = try #require(ann.request("project/invite", ["key": .string(key), "role": "read"])["result"]?["line"])
        let single = try #require(ann.request("project/invite", ["key": .string(key), "role": "read", "once": true])["result"]?["line"])
        // Another user on the machine reads none of it: the invitations' secrets are in project.json.
        for (path, wanted) in [("", 0o700), ("/projects", 0o700), ("/projects/\(key)", 0o700),
                               ("/projects/\(key)/project.json", 0o600), ("/projects/\(key)/roster", 0o600)] {
            let mode = try FileManager.default.attributesOfItem(atPath: ann.data + path)[.posixPermissions] as? Int
            #expect(mode == wanted, "\(path): \(String(mode ?? -1, radix: 8))")
        }
        #expect(bob.join(line)["result"] != nil)
        #expect(waitUntil(timeout: 20) { ann.role(of: bob, in: key) == .write && ann.links(key).count == 1 })
        let revoked = ann.request("project/revoke", ["key": .string(key), "member": "bob"])
        #expect(revoked["result"] != nil, "\(revoked)")
        #expect(waitUntil(timeout: 10) { ann.links(key).isEmpty })
        // The lines for several people are gone, the single-use one stays (it went to one person).
        #expect(ann.project(key) { $0?.invitations.map(\.once) } == [true])
        // The same person, a fresh key, each line shared with several people: refused at the handshake.
        for (index, held) in [line, reading].enumerated() {
            let again = try RosterNode(23_000 + UInt64(index) * 1_000, user: "bob")
            defer { again.stop() }
            #expect(again.publicKey != bob.publicKey)
            #expect(again.join(held)["result"] != nil)
            #expect(waitUntil(timeout: 20) { again.log.all.contains { $0.contains("authentication failed") } }, "\(again.log.all.suffix(5))")
            #expect(ann.role(of: again, in: key) == nil && ann.roster(key)?.roles.count == 1, "the fresh key is no member")
        }
        // Sharing again prints a fresh standing line, which admits a new member; the single-use line still works.
        let renewed = try #require(try ann.share(root)["line"])
        let secret: (JSONValue) throws -> [UInt8] = { try JoinLine(parsing: $0.stringValue ?? "").secret }
        #expect(try secret(renewed) != secret(line))
        let dan = try RosterNode(26_000, user: "dan"), eve = try RosterNode(27_000, user: "eve")
        defer { for node in [dan, eve] { node.stop() } }
        #expect(dan.join(renewed)["result"] != nil && eve.join(single)["result"] != nil)
        #expect(waitUntil(timeout: 20) { ann.role(of: dan, in: key) == .write && ann.role(of: eve, in: key) == .read },
                "\(ann.log.all.suffix(6))")
        // Sharing once more keeps that line (it was not withdrawn).
        #expect(try secret(try #require(try ann.share(root)["line"])) == secret(renewed))
    }

    /// A member sends the owner a batch of thousands of changes it signed itself (for another
    /// project, so none verifies here): refused by author, before any signature is checked, and
    /// nothing is kept. A batch in which an owner makes a key owner and that key then signs a
    /// change is still taken.
    @Test func aBatchByANonOwnerIsRefusedBeforeItsSignaturesAreChecked() throws {
        let net = PeerTestNetwork()
        let host = net.makeDaemon(28_000)
        let transport = RecordingTransport()   // held here: the daemon holds its transport weakly
        host.transport = transport
        let editor = TestEditor(daemon: host)
        editor.initialize(user: "ann")
        let reply = editor.request("project/share", ["root": .string(try Self.folder("flood"))])
        let shared = try #require(reply["result"], "\(reply)")
        let key = try #require(shared["key"]?.stringValue)
        let roster = try #require(host.projects.project(key: key)?.roster)
        let mallory = Curve25519.Signing.PrivateKey()
        let malloryKey = try #require(MemberKey(Array(mallory.publicKey.rawRepresentation)))
        let flood = try (2...ProjectRoster.maximumChanges + 1).map { counter in
            try RosterChange.signed(subject: malloryKey, role: .owner, counter: UInt64(counter), projectKey: "another", signer: mallory)
        }
        let link = RecordingLink(id: 7, scope: .project(key: key))
        link.peerKey = Array(mallory.publicKey.rawRepresentation)
        let payload = RosterPayload.roster(founder: roster.founder, changes: flood).encoded
        do {
            try host.projects.receiveProjectFrame(key: key, payload: payload, from: link)
            Issue.record("a flood of changes by a non-owner was taken")
        } catch {
            #expect("\(error)".contains("which was never an owner"), "\(error)")
        }
        #expect(host.projects.project(key: key)?.roster == roster, "nothing kept")
        // The same flood behind a promotion that claims the founder as author (signed by mallory):
        // the promotion is checked first and does not verify.
        var bytes = RosterChange.encode([try RosterChange.signed(subject: malloryKey, role: .owner, counter: 1, projectKey: key, signer: mallory)])
        bytes.replaceSubrange(36..<68, with: roster.founder.bytes)   // version, count, subject, role, counter: then the author
        let forged = try RosterChange.decode(bytes)
        #expect(forged.first?.author == roster.founder)
        do {
            try host.projects.receiveProjectFrame(key: key, payload: RosterPayload.roster(founder: roster.founder, changes: flood.dropLast() + forged).encoded, from: link)
            Issue.record("a forged promotion was taken")
        } catch {
            #expect("\(error)".contains("signature does not verify"), "\(error)")
        }
        #expect(host.projects.project(key: key)?.roster == roster, "nothing kept")
        // An owner's promotion and the new owner's change, in one batch: taken.
        var copy = roster
        let promote = try copy.change(malloryKey, to: .owner, signer: host.identity.privateKey)
        let invited = try copy.change(MemberKey(Array(repeating: 9, count: 32))!, to: .read, signer: mallory)
        try host.projects.receiveProjectFrame(key: key, payload: RosterPayload.roster(founder: roster.founder, changes: [invited, promote]).encoded, from: link)
        #expect(host.projects.project(key: key)?.roster == copy)
    }

    /// A project shared before roles admits new keys by its member secret; once a member is
    /// revoked, that secret (which the member holds) admits no new key, and sharing again prints
    /// a line with a fresh standing invitation instead.
    @Test func aRevocationStopsTheMemberSecretOfAProjectSharedBeforeRolesAdmitting() throws {
        let net = PeerTestNetwork()
        let host = net.makeDaemon(29_000)
        let transport = RecordingTransport()   // held here: the daemon holds its transport weakly
        host.transport = transport
        let editor = TestEditor(daemon: host)
        editor.initialize(user: "ann")
        let root = try Self.folder("legacy-revoke")
        let key = try #require(editor.request("project/share", ["root": .string(root)])["result"]?["key"]?.stringValue)
        let project = try #require(host.projects.project(key: key))
        // As a project shared before roles is loaded: its line is the member secret's, which admits.
        project.invitations.removeAll()
        project.memberSecretAdmits = true
        let bob = try #require(MemberKey(Array(Curve25519.Signing.PrivateKey().publicKey.rawRepresentation)))
        var roster = try #require(project.roster)
        try roster.change(bob, to: .write, signer: host.identity.privateKey)
        project.roster = roster
        let fingerprint = PeerIdentity.fingerprint(ofPublicKey: bob.bytes)
        let revoked = editor.request("project/revoke", ["key": .string(key), "member": .string(fingerprint)])
        #expect(revoked["result"] != nil, "\(revoked)")
        #expect(project.memberSecretAdmits == false)
        let line = try #require(editor.request("project/share", ["root": .string(root)])["result"]?["line"]?.stringValue)
        let parsed = try JoinLine(parsing: line)
        #expect(parsed.secret != project.secret && parsed.projectKeyText == key, "a standing invitation's line")
        #expect(project.invitations.map(\.standing) == [true])
    }

    /// bob, a writer from the share line, is made a reader; he still holds the line, which gives
    /// `write`: it is withdrawn, so a fresh key of his is not a writer through it. A multi-use
    /// read line (giving no more than he has now) stays.
    @Test func aDemotedMemberCannotWriteAgainUnderAFreshKey() throws {
        let ann = try RosterNode(30_000, user: "ann"), bob = try RosterNode(31_000, user: "bob")
        defer { for node in [ann, bob] { node.stop() } }
        let shared = try ann.share(try Self.folder("demoted"))
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        _ = try #require(ann.request("project/invite", ["key": .string(key), "role": "read"])["result"])
        #expect(bob.join(line)["result"] != nil)
        #expect(waitUntil(timeout: 20) { ann.role(of: bob, in: key) == .write })
        let changed = ann.request("project/role", ["key": .string(key), "member": "bob", "role": "read"])
        #expect(changed["result"]?["role"] == "read", "\(changed)")
        #expect(ann.project(key) { $0?.invitations.map(\.role) } == [.read], "the write line is withdrawn, the read one stays")
        let again = try RosterNode(32_000, user: "bob")
        defer { again.stop() }
        #expect(again.join(line)["result"] != nil)
        #expect(waitUntil(timeout: 20) { again.log.all.contains { $0.contains("authentication failed") } }, "\(again.log.all.suffix(5))")
        #expect(ann.role(of: again, in: key) == nil && ann.role(of: bob, in: key) == .read)
    }
}

/// A line of many uses admits a bounded number of keys: its holder cannot sign in spare keys
/// without end (they would outlive a revocation of its first key and fill the roster for good).
@Suite(.serialized) struct InvitationUseLimitTests {
    @Test func aLineOfManyUsesIsUsedUpAfterItsLimitAndSharingAgainPrintsAFreshOne() throws {
        let ann = try RosterNode(31_000, user: "ann")
        defer { ann.stop() }
        try ann.run { $0.projects.invitationUseLimit = 2 }
        let root = try HostileRosterTests.folder("use-limit")
        let shared = try ann.share(root)
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        var joiners: [RosterNode] = []
        defer { for node in joiners { node.stop() } }
        for index in 0..<2 {
            let joiner = try RosterNode(32_000 + UInt64(index) * 1_000, user: "spare\(index)")
            joiners.append(joiner)
            #expect(joiner.join(line)["result"] != nil)
            #expect(waitUntil(timeout: 20) { ann.role(of: joiner, in: key) == .write }, "\(ann.log.all.suffix(5))")
        }
        // Used up: the owner's editors are told, the line is gone, a third key is refused.
        var told: [JSONValue] = []
        #expect(waitUntil(timeout: 5) {
            told += ann.take("window/showMessage")
            return told.contains { ($0["params"]?["message"]?.stringValue ?? $0["message"]?.stringValue ?? "").contains("used up") }
        }, "\(told)")
        #expect(ann.project(key) { $0?.invitations.contains(where: \.standing) } == false)
        let third = try RosterNode(34_000, user: "spare2")
        joiners.append(third)
        #expect(third.join(line)["result"] != nil)
        #expect(waitUntil(timeout: 20) { third.log.all.contains { $0.contains("authentication failed") } }, "\(third.log.all.suffix(5))")
        #expect(ann.role(of: third, in: key) == nil)
        // Sharing again prints a fresh line, which admits the third key.
        let renewed = try #require(try ann.share(root)["line"])
        #expect(try JoinLine(parsing: renewed.stringValue ?? "").secret != JoinLine(parsing: line.stringValue ?? "").secret)
        let fourth = try RosterNode(35_000, user: "dan")
        joiners.append(fourth)
        #expect(fourth.join(renewed)["result"] != nil)
        #expect(waitUntil(timeout: 20) { ann.role(of: fourth, in: key) == .write })
    }
}
