import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProject
import QuireTestSupport

/// Two daemons in one process: one shares a folder, the other joins it from the line; the
/// project's link carries the tree and the documents, and each side's disk follows.
@Suite struct ProjectPeerTests {
    /// Every file under `root` (not `.git`), by relative path, with its bytes.
    static func contents(of root: String) -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let path = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            result[path] = FileManager.default.contents(atPath: root + "/" + path)
        }
        return result
    }

    /// Carries the network and runs both services' disk passes until `done` holds (bounded).
    static func settle(_ net: PeerTestNetwork, _ daemons: [Daemon], until done: () -> Bool) -> Bool {
        for _ in 0..<50 {
            net.pump(daemons)
            for daemon in daemons {
                for project in daemon.projects.projects.values where project.needsScan { daemon.projects.scanDisk(project) }
                daemon.projects.syncDisk()
            }
            net.pump(daemons)
            if done() { return true }
        }
        return false
    }

    @Test func shareAndJoinGiveTheSameFilesAndEditsGoBothWays() throws {
        let files: [String: [UInt8]] = [
            "README.md": Array("# Shared\n".utf8),
            "src/main.swift": Array("print(1)\n".utf8),
            "src/deep/util.swift": Array("let x = 1\r\nlet y = 2\r\n".utf8),
            "notes/empty.txt": [],
            "logo.png": [0x89, 0x00, 0x01],
        ]
        let root = try ProjectFixture.folder(files, name: "shared")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(300), joiner = net.makeDaemon(400)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("project-peers") + "/copy"
        let joined = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        #expect(joined["result"]?["directory"]?.stringValue?.hasSuffix("/copy") == true, "\(joined)")
        let wire = try net.link(joiner, host, scope: .project(key: key))
        let expected = Self.contents(of: root).filter { $0.key != "logo.png" }
        #expect(Self.settle(net, [host, joiner]) { Self.contents(of: directory) == expected },
                "\(Self.contents(of: directory).keys.sorted()) vs \(expected.keys.sorted())")
        #expect(joiner.projects.project(key: key)?.tree == host.projects.project(key: key)?.tree)
        #expect(joinerEditor.take("project/progress").last?["params"]?["written"] == 4)
        // The host edits a file in its editor: the joiner's file follows.
        let opened = hostEditor.request("document/open", ["file": .string(root + "/README.md"), "text": "# Shared\n", "ifShared": true])
        hostEditor.uri = try #require(opened["result"]?["uri"]?.stringValue)
        hostEditor.text = Array("# Shared\n".unicodeScalars)
        _ = hostEditor.edit(8..<8, with: " project")
        #expect(Self.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/README.md") == "# Shared project\n" })
        #expect(ProjectFixture.read(root + "/README.md") == "# Shared\n", "the host's open buffer is its editor's to save")
        // The joiner changes a file and adds one with another program: the host's files follow.
        try ProjectFixture.write(Array("print(2)\n".utf8), to: directory + "/src/main.swift")
        try ProjectFixture.write(Array("new\n".utf8), to: directory + "/src/added.swift")
        for project in joiner.projects.projects.values { project.needsScan = true }
        #expect(Self.settle(net, [host, joiner]) {
            ProjectFixture.read(root + "/src/main.swift") == "print(2)\n" && ProjectFixture.read(root + "/src/added.swift") == "new\n"
        })
        #expect(ProjectFixture.read(root + "/src/deep/util.swift") == "let x = 1\r\nlet y = 2\r\n", "untouched files keep their bytes")
        _ = wire
    }

    @Test func joiningAnEmptyProjectReportsItComplete() throws {
        let root = try ProjectFixture.folder([:], name: "empty")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(960), joiner = net.makeDaemon(970)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        #expect(shared["files"] == 0)
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("empty-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        joiner.projects.syncDisk()
        #expect(joinerEditor.take("project/progress").isEmpty, "nothing heard from the host yet: no progress")
        let wire = try net.link(joiner, host, scope: .project(key: key))
        var progress: [JSONValue] = []
        #expect(Self.settle(net, [host, joiner]) {
            progress += joinerEditor.take("project/progress")
            return !progress.isEmpty
        })
        #expect(progress.last?["params"]?["files"] == 0 && progress.last?["params"]?["written"] == 0, "\(progress)")
        _ = (wire, hostTransport, joinerTransport)
    }

    @Test func aJoinersFileIsWrittenOnlyOnceItsTextHasArrived() throws {
        // Files whose texts take several frames: between the document list (which makes empty
        // copies) and the operations, the joiner's disk pass must write nothing empty or partial.
        var files: [String: [UInt8]] = [:]
        for index in 0..<6 {
            let lines = (0..<400).map { "let <A\(index)_\($0)> = f(\($0)) + \"s\"\n" }.joined()
            files["src/file\(index).swift"] = Array(lines.utf8)
        }
        let root = try ProjectFixture.folder(files, name: "paced")
        let net = PeerTestNetwork()
        let host = net.makeDaemon(900), joiner = net.makeDaemon(950)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let sharing = hostEditor.request("project/share", ["root": .string(root)])
        let shared = try #require(sharing["result"], "\(sharing)")
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("paced-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        // The host's output is what is paced here (the wire budgets a -> b), so the host dials.
        // It speaks the member secret: the joiner is made a member as if it had redeemed the
        // line's invitation already (the roster names it, it holds the member secret).
        let hostProject = try #require(host.projects.project(key: key)), joinerProject = try #require(joiner.projects.project(key: key))
        try hostProject.roster?.change(MemberKey(joiner.identity.publicKey)!, to: .write, signer: host.identity.privateKey)
        joinerProject.secret = hostProject.secret
        joinerProject.redeeming = false
        try joiner.addPeerSecret(hostProject.secret, scope: .project(key: key))
        let wire = try net.link(host, joiner, paced: true, scope: .project(key: key))
        var steps = 0
        while Self.contents(of: directory).count < files.count || Self.contents(of: directory).values.contains(where: \.isEmpty) {
            steps += 1
            guard steps < 2_000 else { break }
            _ = net.carry(wire, atMost: 1_500, daemons: [host, joiner])
            joiner.projects.syncDisk()
            for (path, bytes) in Self.contents(of: directory) {
                #expect(bytes == Data(files[path] ?? []), "step \(steps): \(path) written before its text arrived (\(bytes.count) bytes)")
            }
            for progress in joinerEditor.take("project/progress") {
                let written = progress["params"]?["written"]?.integerValue ?? 0
                let whole = Self.contents(of: directory).filter { Data(files[$0.key] ?? []) == $0.value }.count
                #expect(Int(written) <= whole, "step \(steps): progress says \(written) files are in, \(whole) are")
            }
        }
        #expect(Self.contents(of: directory) == files.mapValues { Data($0) }, "after \(steps) steps")
        #expect(steps > 3, "the texts took several steps to arrive")
        _ = (hostTransport, joinerTransport)
    }

    @Test func whatATimerPassReadsFromDiskGoesOutWithoutWaitingForAnotherRead() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("one\n".utf8)], name: "timed")
        let net = PeerTestNetwork()
        let store = try DocumentStore(path: DaemonProcess.temporaryDirectory("timed-data"), durability: .sync, logger: Logger(label: "test"))
        let host = net.makeDaemon(700, store: store), joiner = net.makeDaemon(800)
        let hostTransport = RecordingTransport(), joinerTransport = RecordingTransport()
        host.transport = hostTransport
        joiner.transport = joinerTransport
        let hostEditor = TestEditor(daemon: host), joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "bob")
        let shared = try #require(hostEditor.request("project/share", ["root": .string(root)])["result"])
        let key = try #require(shared["key"]?.stringValue)
        let directory = DaemonProcess.temporaryDirectory("timed-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        #expect(Self.settle(net, [host, joiner]) { ProjectFixture.read(directory + "/a.txt") == "one\n" })
        let schedule = ManualSchedule()
        host.projects.start(schedule: schedule.schedule)
        schedule.runDue()
        net.pump([host, joiner])
        // The host's disk changes; its next timer pass reads it, and the edit leaves at once
        // (made durable first), not when some editor or peer next sends something.
        try ProjectFixture.write(Array("one\ntwo\n".utf8), to: root + "/a.txt")
        wire.bToA = []
        schedule.runDue()
        #expect(!wire.bToA.isEmpty, "the edit waits for nothing")
        net.pump([host, joiner])
        let file = try #require(host.projects.project(key: key)?.view.files[try ProjectPath("a.txt")])
        #expect(joiner.documents["@\(key)/\(file)"]?.text.string == "one\ntwo\n")
    }
}
