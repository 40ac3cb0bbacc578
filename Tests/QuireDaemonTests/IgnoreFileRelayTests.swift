import Foundation
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes

/// A partner holding the project's secret empties its copy of the ignore file that leaves `.env`
/// out: the host holds that change on its disk, but another member's copy of the ignore file
/// follows the document, and that member's own `.env` (never shared, ignored when it was made)
/// must not be shared because of it: ignored paths are outside the share both ways, also when a
/// partner un-ignores them (by emptying the ignore file, removing it, or moving it away).
@Suite struct IgnoreFileRelayTests {
    @Test(arguments: ["empty", "delete", "move"]) func aPartnerUnignoringAPathDoesNotShareAnotherMembersSecret(how: String) throws {
        let root = try ProjectFixture.folder([".gitignore": Array(".env\n".utf8), "a.txt": Array("a\n".utf8)], name: "unignore")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(3600), bob = net.makeDaemon(3700), mallory = net.makeDaemon(3800)
        let transports = [RecordingTransport(), RecordingTransport(), RecordingTransport()]
        for (daemon, transport) in zip([host, bob, mallory], transports) { daemon.transport = transport }
        let hostEditor = TestEditor(daemon: host), bobEditor = TestEditor(daemon: bob), malloryEditor = TestEditor(daemon: mallory)
        hostEditor.initialize(user: "ann")
        bobEditor.initialize(user: "bob")
        malloryEditor.initialize(user: "mallory")
        let reply = hostEditor.request("project/share", ["root": .string(root)])
        let shared = try #require(reply["result"], "\(reply)")
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        let bobCopy = DaemonProcess.temporaryDirectory("unignore-bob") + "/copy"
        let malloryCopy = DaemonProcess.temporaryDirectory("unignore-mallory") + "/copy"
        _ = bobEditor.request("project/join", ["line": line, "directory": .string(bobCopy)])
        _ = malloryEditor.request("project/join", ["line": line, "directory": .string(malloryCopy)])
        let bobWire = try net.link(bob, host, scope: .project(key: key))
        let malloryWire = try net.link(mallory, host, scope: .project(key: key))
        let all = [host, bob, mallory]
        #expect(ProjectPeerTests.settle(net, all) {
            ProjectFixture.read(bobCopy + "/a.txt") == "a\n" && ProjectFixture.read(malloryCopy + "/.gitignore") == ".env\n"
        })
        // Bob keeps a secret in his copy, where the project's ignore file leaves it out.
        try ProjectFixture.write(Array("TOKEN=bob\n".utf8), to: bobCopy + "/.env")
        for project in bob.projects.projects.values { project.needsScan = true }
        _ = ProjectPeerTests.settle(net, all) { false }
        // The file system's clock moves on (its ticks are coarse), so the ignore file is written after.
        #expect(Self.clockPasses(statusChangeOf: bobCopy + "/.env", probe: bobCopy + "/../probe"))
        let env = try ProjectPath(".env")
        #expect(try #require(mallory.projects.project(key: key)).view.files[env] == nil)
        // Mallory empties her copy of the ignore file, or removes it, or moves it away.
        switch how {
        case "empty": try ProjectFixture.write([], to: malloryCopy + "/.gitignore")
        case "delete": try FileManager.default.removeItem(atPath: malloryCopy + "/.gitignore")
        default: try FileManager.default.moveItem(atPath: malloryCopy + "/.gitignore", toPath: malloryCopy + "/ignored.txt")
        }
        for project in mallory.projects.projects.values { project.needsScan = true }
        _ = ProjectPeerTests.settle(net, all) { false }
        for project in bob.projects.projects.values { project.needsScan = true }
        _ = ProjectPeerTests.settle(net, all) { false }
        let malloryProject = try #require(mallory.projects.project(key: key))
        let leaked = malloryProject.view.files[env].flatMap { mallory.document(malloryProject.uri(of: $0))?.text.string }
        #expect(leaked == nil, "bob's secret reached the partner: \(leaked ?? "")")
        #expect(ProjectFixture.read(malloryCopy + "/.env") == nil)
        #expect(ProjectFixture.read(bobCopy + "/.env") == "TOKEN=bob\n")
        // Nor does Bob opening his file in an editor make it a file of the project.
        let opened = bobEditor.request("document/open", ["file": .string(bobCopy + "/.env"), "text": "TOKEN=bob\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        #expect(!uri.hasPrefix("@"), "not a document of the project: \(uri)")
        _ = ProjectPeerTests.settle(net, all) { false }
        #expect(try #require(mallory.projects.project(key: key)).view.files[env] == nil)
        _ = (bobWire, malloryWire, transports)
    }

    /// Waits (10 s at most) until a file made now at `probe` has a later status-change time than `path`.
    static func clockPasses(statusChangeOf path: String, probe: String) -> Bool {
        func changed(_ path: String) -> Int64? {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            return Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        }
        guard let before = changed(path) else { return false }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            _ = FileManager.default.createFile(atPath: probe, contents: nil)
            defer { try? FileManager.default.removeItem(atPath: probe) }
            if let now = changed(probe), now > before { return true }
        }
        return false
    }
}

/// A partner holding the secret puts a file at a path the project ignores (`.env`) into the tree
/// without changing the rules anyone else holds (its daemon is changed to): the host holds it,
/// and another joiner does not
/// write it either, so a program of that member's that later writes its own `.env` there (a
/// tool keeping tokens) does not write into a shared document.
@Suite struct IgnoredPathJoinerTests {
    @Test func aJoinerDoesNotWriteAPartnersFileAtAPathItIgnores() throws {
        let root = try ProjectFixture.folder([".gitignore": Array(".env\n".utf8), "a.txt": Array("a\n".utf8)], name: "joiner-ignored")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(3900), bob = net.makeDaemon(4000), mallory = net.makeDaemon(4100)
        let transports = [RecordingTransport(), RecordingTransport(), RecordingTransport()]
        for (daemon, transport) in zip([host, bob, mallory], transports) { daemon.transport = transport }
        let hostEditor = TestEditor(daemon: host), bobEditor = TestEditor(daemon: bob), malloryEditor = TestEditor(daemon: mallory)
        hostEditor.initialize(user: "ann")
        bobEditor.initialize(user: "bob")
        malloryEditor.initialize(user: "mallory")
        let reply = hostEditor.request("project/share", ["root": .string(root)])
        let shared = try #require(reply["result"], "\(reply)")
        let key = try #require(shared["key"]?.stringValue)
        let line = try #require(shared["line"])
        let bobCopy = DaemonProcess.temporaryDirectory("ignored-bob") + "/copy"
        let malloryCopy = DaemonProcess.temporaryDirectory("ignored-mallory") + "/copy"
        _ = bobEditor.request("project/join", ["line": line, "directory": .string(bobCopy)])
        _ = malloryEditor.request("project/join", ["line": line, "directory": .string(malloryCopy)])
        let bobWire = try net.link(bob, host, scope: .project(key: key))
        let malloryWire = try net.link(mallory, host, scope: .project(key: key))
        let all = [host, bob, mallory]
        #expect(ProjectPeerTests.settle(net, all) {
            ProjectFixture.read(bobCopy + "/a.txt") == "a\n" && ProjectFixture.read(malloryCopy + "/.gitignore") == ".env\n"
        })
        // Mallory's daemon, changed, puts `.env` in the tree with a document, rules untouched.
        let malloryProject = try #require(mallory.projects.project(key: key))
        let env = try ProjectPath(".env")
        let create = try malloryProject.tree.create(at: env)
        _ = try mallory.registry.openDocument(malloryProject.uri(of: create.file)) { ReplicatingText("TOKEN=\n", replica: ReplicaID(4242)) }
        mallory.projects.treeChanged(malloryProject, by: [create])
        #expect(malloryProject.view.files[env] != nil)
        let bobProject = try #require(bob.projects.project(key: key))
        #expect(ProjectPeerTests.settle(net, all) { bobProject.view.files[env] != nil })
        _ = ProjectPeerTests.settle(net, all) { false }
        #expect(ProjectFixture.read(bobCopy + "/.gitignore") == ".env\n")
        #expect(ProjectFixture.read(bobCopy + "/.env") == nil, "the partner's file is not written where Bob's rules leave files out")
        _ = (bobWire, malloryWire, transports)
    }
}
