import Foundation
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes

/// A partner that holds the project's secret (it joined) and turns hostile: what it sends must
/// never reach the host's `.git`, and must never make the host send files it did not share.
@Suite struct HostileProjectPeerTests {
    /// A tree batch placing a file in `.git` (made by hand: no honest daemon makes one) is
    /// refused, cutting the link, and nothing is made on disk.
    @Test func aTreeFrameIntoGitIsRefused() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "gitroot")
        try FileManager.default.createDirectory(atPath: root + "/.git/hooks", withIntermediateDirectories: true)
        let (host, _) = ProjectFixture.daemon(1500)
        let key = try #require(ProjectFixture.share(host, root: root)["result"]?["key"]?.stringValue)
        let link = try ProjectFixture.link(to: host, key: key)
        for (template, target) in [("zzzz/hooks/pre-commit", ".git"), ("sub/zzzz/config", ".Git")] {
            let operation = ProjectTree.Operation(file: FileID(replica: ReplicaID(999), serial: 1), path: try ProjectPath(template),
                                                  timestamp: LamportTimestamp(counter: 5, replica: ReplicaID(999)))
            var payload = ProjectTree.Operation.encode([operation])
            let at = try #require(payload.firstRange(of: Array("zzzz".utf8)))
            payload.replaceSubrange(at, with: Array(target.utf8))
            #expect(throws: ProjectFrameError.self) { try host.projects.receiveProjectFrame(key: key, payload: payload, from: link) }
        }
        let tree = try #require(host.projects.project(key: key)?.view.paths.values.map(\.string))
        #expect(tree == ["a.txt"])
        host.projects.syncDisk()
        #expect(!FileManager.default.fileExists(atPath: root + "/.git/hooks/pre-commit"))
        #expect(!FileManager.default.fileExists(atPath: root + "/sub"))
    }

    /// The joiner rewrites the host's `.gitignore` and adds a `.quireignore` that re-includes
    /// `.env`: the host's ignore files stay as they are on its disk, so its next scan still
    /// leaves `.env` out and it never reaches the partner; the partner's other files still do.
    @Test func aPartnersIgnoreFilesNeverChangeWhatTheHostShares() throws {
        let root = try ProjectFixture.folder([
            ".gitignore": Array(".env\n".utf8), ".env": Array("TOKEN=secret\n".utf8), "a.txt": Array("a\n".utf8),
        ], name: "ignores")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(1600), joiner = net.makeDaemon(1700)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "mallory")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("hostile-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/.gitignore") == ".env\n" })
        // The partner's program rewrites the ignore files and adds a file.
        try ProjectFixture.write([], to: directory + "/.gitignore")
        try ProjectFixture.write(Array("!.env\n".utf8), to: directory + "/.quireignore")
        try ProjectFixture.write(Array("new\n".utf8), to: directory + "/src/new.txt")
        for project in joiner.projects.projects.values { project.needsScan = true }
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(root + "/src/new.txt") == "new\n" })
        let hostProject = try #require(host.projects.project(key: key))
        #expect(hostProject.view.files[try ProjectPath(".quireignore")] != nil, "the partner's file is in the tree")
        // The host's disk is read again (as its watcher would after any change).
        hostProject.needsScan = true
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { !hostProject.needsScan })
        net.pump([host, joiner])
        #expect(ProjectFixture.read(root + "/.gitignore") == ".env\n")
        #expect(!FileManager.default.fileExists(atPath: root + "/.quireignore"))
        #expect(hostProject.view.files[try ProjectPath(".env")] == nil, "the host does not share what it ignores")
        #expect(!FileManager.default.fileExists(atPath: directory + "/.env"))
        // The host's own change to its ignore file still goes out as an edit.
        try ProjectFixture.write(Array(".env\n*.log\n".utf8), to: root + "/.gitignore")
        hostProject.needsScan = true
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/.gitignore")?.contains("*.log") == true })
        _ = wire
    }

    /// A partner's documents reach the disk only within the bounds a host may share: a file
    /// over `fileBytes`, or one that would take the folder past `totalBytes`, stays a document.
    @Test func aPartnersFilesAreWrittenOnlyWithinTheSharingBounds() throws {
        let root = try ProjectFixture.folder([
            "small.txt": Array("0123456789\n".utf8), "big.txt": Array(String(repeating: "x", count: 40).utf8),
            "more.txt": Array("abcdefghij\n".utf8),
        ], name: "bounded")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(1800), joiner = net.makeDaemon(1900)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        var limits = ProjectScanner.Limits()
        limits.fileBytes = 32
        limits.totalBytes = 16
        joiner.projects.diskLimits = limits
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "mallory")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("bounded-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { joiner.documents.count == 3 && !ProjectPeerTests.contents(of: directory).isEmpty })
        _ = ProjectPeerTests.settle(net, [host, joiner]) { true }
        // One of the 11-byte files fits in 16 bytes, not both; the 40-byte one never does.
        let written = Set(ProjectPeerTests.contents(of: directory).keys)
        #expect(written == ["more.txt"] || written == ["small.txt"], "\(written.sorted())")
        #expect(!FileManager.default.fileExists(atPath: directory + "/big.txt"))
        _ = wire
    }

    /// A hostile host names its project `.ssh` (or `.config`): joining without a directory must
    /// not make that hidden folder in the working directory (a home folder without `~/.ssh` would
    /// get the host's `authorized_keys`); with a directory given it joins as asked.
    @Test func aHiddenProjectNameNeedsADirectory() throws {
        let (joiner, transport) = ProjectFixture.daemon(2000)
        let home = DaemonProcess.temporaryDirectory("hidden-home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let line = try JoinLine(name: ".ssh", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: 7, count: 32),
                                fingerprint: Array(repeating: 1, count: 16), relay: nil).encoded
        #expect(throws: ResponseError.self) { try joiner.projects.join(line: line, directory: nil, workingDirectory: home) }
        #expect(!FileManager.default.fileExists(atPath: home + "/.ssh"))
        #expect(joiner.projects.projects.isEmpty && transport.connected.isEmpty)
        let joined = try joiner.projects.join(line: line, directory: home + "/visible", workingDirectory: home)
        #expect(joined.directory == home + "/visible")
    }

    /// Tree frames on a link of another scope (the general secret, another project) or for a
    /// project this daemon does not hold change nothing and are refused.
    @Test func treeFramesOutsideTheLinksScopeAreRefused() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "scoped")
        let (host, _) = ProjectFixture.daemon(2100)
        let key = try #require(ProjectFixture.share(host, root: root)["result"]?["key"]?.stringValue)
        let operation = ProjectTree.Operation(file: FileID(replica: ReplicaID(999), serial: 1), path: try ProjectPath("planted.txt"),
                                              timestamp: LamportTimestamp(counter: 5, replica: ReplicaID(999)))
        let payload = ProjectTree.Operation.encode([operation])
        let general = RecordingLink(id: 90, scope: .general)
        let other = RecordingLink(id: 91, scope: .project(key: "0123456789abcdef"))
        #expect(throws: ProjectFrameError.self) { try host.projects.receiveProjectFrame(key: key, payload: payload, from: general) }
        #expect(throws: ProjectFrameError.self) { try host.projects.receiveProjectFrame(key: key, payload: payload, from: other) }
        #expect(throws: ProjectFrameError.self) { try host.projects.receiveProjectFrame(key: "0123456789abcdef", payload: payload, from: other) }
        #expect(host.projects.project(key: key)?.view.paths.count == 1)
    }

    /// The host had a file open by name before sharing its folder (a document of its own, not
    /// the project's): a partner's change to that file is not written under the open buffer.
    @Test func aFileOpenByNameBeforeSharingIsNotWrittenUnderTheBuffer() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "openfirst")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(2200), joiner = net.makeDaemon(2300)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "mallory")
        let opened = hostEditor.request("document/open", ["file": .string(root + "/a.txt"), "text": "a\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue)
        #expect(!uri.hasPrefix("@"), "opened before the folder is shared: a document of its own")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("openfirst-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/a.txt") == "a\n" })
        try ProjectFixture.write(Array("changed by the partner\n".utf8), to: directory + "/a.txt")
        for project in joiner.projects.projects.values { project.needsScan = true }
        let hostProject = try #require(host.projects.project(key: key))
        let file = try #require(hostProject.view.files[try ProjectPath("a.txt")])
        #expect(ProjectPeerTests.settle(net, [host, joiner]) { host.documents["@\(key)/\(file)"]?.text.string == "changed by the partner\n" })
        _ = ProjectPeerTests.settle(net, [host, joiner]) { true }
        #expect(ProjectFixture.read(root + "/a.txt") == "a\n", "the open buffer is the editor's to save")
        _ = wire
    }
}
