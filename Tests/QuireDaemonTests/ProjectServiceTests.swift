import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes

/// The daemon's project service: sharing a folder, the join line, list and stop, naming the
/// files editors open, and the tree and files kept in step both ways
/// (protocol/decisions/project-sharing.md).
@Suite struct ProjectServiceTests {
    static let files: [String: [UInt8]] = [
        "README.md": Array("# Hello\n".utf8),
        "src/main.swift": Array("print(1)\n".utf8),
        "logo.png": [0x89, 0x50, 0x4E, 0x47, 0x00, 0x01],
        ".gitignore": Array("build/\n".utf8),
        "build/out.txt": Array("built\n".utf8),
    ]

    @Test func shareScansAndMakesOneBoundDocumentPerTextFile() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, transport) = ProjectFixture.daemon(100)
        let reply = ProjectFixture.share(daemon, root: root)
        let result = try #require(reply["result"], "\(reply)")
        let key = try #require(result["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        #expect(result["files"] == 3, "README.md, src/main.swift and .gitignore: \(result)")
        #expect(!transport.listenedScopes.isEmpty && transport.listenedScopes.allSatisfy { $0 == .project(key: key) },
                "the project's port takes its secret only: \(transport.listenedScopes)")
        #expect(result["name"]?.stringValue == "proj")
        let skipped = result["skipped"]?.arrayValue ?? []
        #expect(skipped.count == 1 && skipped.first?["path"] == "logo.png" && skipped.first?["reason"]?.stringValue?.contains("binary") == true, "\(skipped)")
        let view = project.tree.view
        #expect(Set(view.files.keys.map(\.string)) == [".gitignore", "README.md", "src/main.swift"])
        for (path, file) in view.files {
            let document = try #require(daemon.documents[DocumentScope.projectURI(key: key, file: file.description)])
            #expect(document.file?.path == root + "/" + path.string)
            #expect(Array(document.text.string.utf8) == Self.files[path.string])
        }
        #expect(daemon.documents.count == 3, "no document for the binary or the ignored file")
        #expect(transport.listened.count == 1 && transport.listened.first?.host == "0.0.0.0")
        // The line parses and holds this project's key, a standing invitation's secret (not the
        // member secret: protocol/decisions/roles.md) and this daemon's key.
        let line = try JoinLine(parsing: try #require(result["line"]?.stringValue))
        #expect(line.projectKeyText == key && line.name == "proj")
        #expect(DocumentScope.projectKey(secret: line.secret) != key && line.secret != project.secret, "the line's secret is an invitation's")
        #expect(line.fingerprintText.replacingOccurrences(of: "-", with: "") == PeerIdentity.normalized(daemon.identity.fingerprint))
        #expect(line.addresses.contains { $0.host == "127.0.0.1" && Int($0.port) == transport.listened.first?.port })
        #expect(result["addresses"]?.arrayValue?.count == line.addresses.count)
        // Sharing again: the same project, line and documents.
        let again = try #require(ProjectFixture.share(daemon, root: root)["result"])
        #expect(again["key"]?.stringValue == key && again["line"] == result["line"], "\(again)")
        #expect(daemon.documents.count == 3 && project.tree.fileCount == 3)
    }

    @Test func shareRefusesWhatItCannotShare() throws {
        let (daemon, _) = ProjectFixture.daemon(110)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(editor.request("project/share", ["root": "relative/path"])["error"]?["code"] == -32602)
        #expect(editor.request("project/share", ["root": "/no/such/folder/here"])["error"]?["code"] == -32602)
        #expect(editor.request("project/share", ["root": "/tmp", "listen": ["nonsense"]])["error"]?["code"] == -32602)
        #expect(editor.request("project/share", ["root": "/tmp", "listen": .array(Array(repeating: "a:1", count: 9))])["error"]?["code"] == -32602)
        let join = editor.request("project/join", ["line": "qj1-abcdefgh"])
        #expect(join["error"]?["code"] == -32602 && join["error"]?["message"]?.stringValue?.contains("join line") == true, "\(join)")
        #expect(daemon.projects.projects.isEmpty && daemon.documents.isEmpty)
    }

    @Test func listAndStop() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, transport) = ProjectFixture.daemon(120)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let listed = editor.request("project/list")["result"]?["projects"]?.arrayValue ?? []
        #expect(listed.count == 1 && listed.first?["key"]?.stringValue == key && listed.first?["role"] == "host" && listed.first?["files"] == 3, "\(listed)")
        #expect(editor.request("project/stop", ["key": .string(key)])["result"] == .null)
        #expect(transport.disconnected == [.project(key: key)] && transport.stopped == transport.listened.map(\.port))
        #expect(editor.request("project/list")["result"]?["projects"]?.arrayValue?.isEmpty == true)
        #expect(daemon.documents.count == 3, "documents stay")
        #expect(FileManager.default.fileExists(atPath: root + "/README.md"), "files stay")
        #expect(editor.request("project/stop", ["key": .string(key)])["error"]?["code"] == -32602)
        #expect(editor.request("project/stop", ["key": "XYZ"])["error"]?["code"] == -32602)
        // Sharing the folder again reuses the secret.
        #expect(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue == key)
    }

    @Test func openIfSharedOpensOnlyProjectFiles() throws {
        let root = try ProjectFixture.folder(Self.files)
        let outside = try ProjectFixture.folder(["notes.txt": Array("mine\n".utf8)], name: "elsewhere")
        let (daemon, _) = ProjectFixture.daemon(130)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let link = try ProjectFixture.link(to: daemon, key: key)
        let before = daemon.documents.count
        let notShared = editor.request("document/open", ["file": .string(outside + "/notes.txt"), "text": "mine\n", "ifShared": true])
        #expect(notShared["result"] == ["shared": false], "\(notShared)")
        #expect(daemon.documents.count == before, "nothing created")
        let opened = editor.request("document/open", ["file": .string(root + "/src/main.swift"), "text": "print(1)\n", "ifShared": true])
        let project = try #require(daemon.projects.project(key: key))
        let file = try #require(project.tree.view.files[try ProjectPath("src/main.swift")])
        #expect(opened["result"]?["shared"] == true && opened["result"]?["uri"]?.stringValue == "@\(key)/\(file)", "\(opened)")
        #expect(opened["result"]?["created"] == false)
        // A new file of the project becomes a file of the tree, sent to the project's links.
        try ProjectFixture.write(Array("new\n".utf8), to: root + "/src/new.swift")
        let added = editor.request("document/open", ["file": .string(root + "/src/new.swift"), "text": "new\n", "ifShared": true])
        let newFile = try #require(project.tree.view.files[try ProjectPath("src/new.swift")])
        #expect(added["result"]?["uri"]?.stringValue == "@\(key)/\(newFile)", "\(added)")
        #expect(try link.takeOperations().map(\.path) == [try ProjectPath("src/new.swift")])
        // An ignored file is no file of the project.
        let ignored = editor.request("document/open", ["file": .string(root + "/build/out.txt"), "text": "built\n", "ifShared": true])
        #expect(ignored["result"] == ["shared": false], "\(ignored)")
        #expect(editor.request("document/open", ["uri": "x", "ifShared": true])["error"]?["code"] == -32602)
    }

    @Test func aChangedDocumentIsWrittenButNeverUnderAnOpenBufferOrOverAChangeOnDisk() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, _) = ProjectFixture.daemon(140)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        _ = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let path = root + "/README.md"
        let opened = editor.request("document/open", ["file": .string(path), "text": "# Hello\n", "ifShared": true])
        let uri = try #require(opened["result"]?["uri"]?.stringValue)
        editor.uri = uri
        editor.text = Array("# Hello\n".unicodeScalars)
        _ = editor.edit(7..<7, with: " world")
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(path) == "# Hello\n", "an open buffer is the editor's to save")
        _ = editor.request("document/close", ["uri": .string(uri)])
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(path) == "# Hello world\n")
        // The disk changes behind the daemon's back while the document changes too: the disk
        // is not overwritten; the scan reads the change as an edit and both are kept.
        try ProjectFixture.write(Array("# Hello world\nfrom disk\n".utf8), to: path)
        let document = try #require(daemon.documents[uri])
        var scratch = document.text
        scratch.replica = ReplicaID(77)
        try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array("> ".unicodeScalars)), to: document)
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(path) == "# Hello world\nfrom disk\n", "the change on disk is not lost")
        for project in daemon.projects.projects.values { daemon.projects.scanDisk(project) }
        #expect(document.text.string == "> # Hello world\nfrom disk\n")
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(path) == "> # Hello world\nfrom disk\n")
    }

    @Test func outsideChangesBecomeEditsCreatesDeletesAndRenames() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, _) = ProjectFixture.daemon(150)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        let readme = try #require(project.tree.view.files[try ProjectPath("README.md")])
        let main = try #require(project.tree.view.files[try ProjectPath("src/main.swift")])
        try ProjectFixture.write(Array("# Hello\nmore\n".utf8), to: root + "/README.md")
        try ProjectFixture.write(Array("brand new\n".utf8), to: root + "/docs/new.md")
        try FileManager.default.moveItem(atPath: root + "/src/main.swift", toPath: root + "/src/app.swift")
        try FileManager.default.removeItem(atPath: root + "/.gitignore")
        daemon.projects.scanDisk(project)
        #expect(daemon.documents["@\(key)/\(readme)"]?.text.string == "# Hello\nmore\n")
        let view = project.tree.view
        #expect(view.paths[main]?.string == "src/app.swift", "a move keeps the file and its document")
        #expect(view.files[try ProjectPath(".gitignore")] == nil)
        let created = try #require(view.files[try ProjectPath("docs/new.md")])
        #expect(daemon.documents["@\(key)/\(created)"]?.text.string == "brand new\n")
        #expect(daemon.documents["@\(key)/\(created)"]?.file?.path == root + "/docs/new.md")
        // Without the .gitignore, build/out.txt is a file of the project too.
        let built = try #require(view.files[try ProjectPath("build/out.txt")])
        let sent = try link.takeOperations()
        #expect(Set(sent.map(\.file)) == [main, created, built, try #require(Set(project.tree.operations.filter { $0.path == nil }.map(\.file)).first)], "\(sent)")
        // Nothing more to read, nothing to write back.
        daemon.projects.scanDisk(project)
        daemon.projects.syncDisk()
        #expect(try link.takeOperations().isEmpty)
        #expect(ProjectFixture.read(root + "/src/app.swift") == "print(1)\n")
    }

    @Test func joiningViaACommandPeersOverItInsteadOfTheLinesAddresses() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (host, _) = ProjectFixture.daemon(180)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let key = try #require(shared["key"]?.stringValue)
        let (joiner, transport) = ProjectFixture.daemon(190)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let directory = DaemonProcess.temporaryDirectory("via") + "/copy"
        for bad: JSONValue in ["", "   ", "ssh host\nrm -rf ~", .string(String(repeating: "s", count: 1025)), 7] {
            let refused = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory), "via": bad])
            #expect(refused["error"]?["code"] == -32602, "\(bad)")
            #expect(refused["error"]?["message"]?.stringValue?.contains("params.via") == true, "\(refused)")
        }
        #expect(joiner.projects.project(key: key) == nil, "a refused join makes nothing")
        let joined = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory), "via": "ssh ann@host"])
        #expect(joined["result"]?["key"]?.stringValue == key, "\(joined)")
        #expect(transport.connected.isEmpty && transport.relays.isEmpty, "the line's addresses are not dialed")
        #expect(transport.commands.count == 1)
        #expect(transport.commands.first?.command == "ssh ann@host quire peer --stdio")
        #expect(transport.commands.first?.scope == .project(key: key))
        #expect(transport.commands.first?.fingerprint == host.identity.fingerprint.replacingOccurrences(of: "-", with: "")
                || PeerIdentity.normalized(transport.commands.first?.fingerprint ?? "") == PeerIdentity.normalized(host.identity.fingerprint),
                "pinned to the host's key")
    }

    @Test func treeFramesReceivedCreateRenameAndDeleteFiles() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (host, _) = ProjectFixture.daemon(160)
        let (joiner, joinerTransport) = ProjectFixture.daemon(170)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let key = try #require(shared["key"]?.stringValue)
        let hostProject = try #require(host.projects.project(key: key))
        let hostLink = try ProjectFixture.link(to: host, key: key)
        let directory = DaemonProcess.temporaryDirectory("joined") + "/copy"
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let joined = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(directory)])
        #expect(joined["result"]?["key"]?.stringValue == key && joined["result"]?["name"] == "proj", "\(joined)")
        #expect(joinerTransport.connected.contains { $0.scope == .project(key: key) && $0.host == "127.0.0.1" })
        #expect(joinerTransport.dials.count == 1, "the line's addresses are alternatives of one dial: \(joinerTransport.dials)")
        #expect(editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(root)])["result"]?["key"]?.stringValue == key,
                "joining again is the same project")
        let joinedProject = try #require(joiner.projects.project(key: key))
        let joinerLink = try ProjectFixture.link(to: joiner, key: key)
        // The host sends its tree when the link comes up; the documents arrive as peers send them
        // (here: made with the host's texts).
        host.projects.projectLinkEstablished(hostLink, key: key)
        func deliver() throws {
            for frame in hostLink.frames { try joiner.projects.receiveProjectFrame(key: key, payload: frame.payload, from: joinerLink) }
            hostLink.frames = []
        }
        try deliver()
        #expect(joinedProject.tree == hostProject.tree)
        for (file, _) in joinedProject.tree.view.paths {
            let uri = "@\(key)/\(file)"
            let text = try #require(host.documents[uri]?.text.string)
            _ = try joiner.registry.openDocument(uri) { ReplicatingText(text, replica: ReplicaID(5)) }
        }
        editor.take("project/progress")
        joiner.projects.syncDisk()
        for path in [".gitignore", "README.md", "src/main.swift"] {
            #expect(ProjectFixture.read(directory + "/" + path) == ProjectFixture.read(root + "/" + path), "\(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory + "/logo.png"))
        let progress = editor.take("project/progress")
        #expect(progress.last?["params"]?["written"] == 3 && progress.last?["params"]?["files"] == 3, "\(progress)")
        // A rename and a delete on the host's disk travel as tree operations.
        try FileManager.default.moveItem(atPath: root + "/src/main.swift", toPath: root + "/src/app.swift")
        try FileManager.default.removeItem(atPath: root + "/README.md")
        host.projects.scanDisk(hostProject)
        try deliver()
        joiner.projects.syncDisk()
        #expect(ProjectFixture.read(directory + "/src/app.swift") == "print(1)\n")
        #expect(!FileManager.default.fileExists(atPath: directory + "/src/main.swift"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/README.md"))
        // A damaged frame is refused (the link is cut by the caller), changing nothing.
        #expect(throws: (any Error).self) { try joiner.projects.receiveProjectFrame(key: key, payload: [1, 5, 0xFF], from: joinerLink) }
        #expect(throws: (any Error).self) { try joiner.projects.receiveProjectFrame(key: "0123456789abcdef", payload: [1, 0], from: joinerLink) }
        #expect(joinedProject.tree == hostProject.tree)
    }

    @Test func joinRefusesAFolderThatIsNotEmpty() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (host, _) = ProjectFixture.daemon(180)
        let line = try #require(ProjectFixture.share(host, root: root)["result"]?["line"])
        let (joiner, _) = ProjectFixture.daemon(190)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let full = try ProjectFixture.folder(["mine.txt": [0x41]], name: "full")
        let reply = editor.request("project/join", ["line": line, "directory": .string(full)])
        #expect(reply["error"]?["code"] == -32602 && reply["error"]?["message"]?.stringValue?.contains("not empty") == true, "\(reply)")
        #expect(joiner.projects.projects.isEmpty)
        // Nor into a project this daemon shares.
        _ = try #require(editor.request("project/share", ["root": .string(full)])["result"])
        let inside = editor.request("project/join", ["line": line, "directory": .string(full + "/sub")])
        #expect(inside["error"]?["code"] == -32602 && inside["error"]?["message"]?.stringValue?.contains("lies in the project") == true, "\(inside)")
        #expect(joiner.projects.projects.count == 1 && !FileManager.default.fileExists(atPath: full + "/sub"), "nothing made")
    }

    @Test func aRestartLoadsTheProject() throws {
        let root = try ProjectFixture.folder(Self.files)
        let data = DaemonProcess.temporaryDirectory("projects-data")
        var key = "", line: JSONValue?
        var tree: ProjectTree?
        var listenedBefore = 0
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, transport) = ProjectFixture.daemon(200, store: store)
            defer { listenedBefore = transport.listened.first?.port ?? -1 }
            let result = try #require(ProjectFixture.share(daemon, root: root)["result"])
            key = try #require(result["key"]?.stringValue)
            line = result["line"]
            daemon.projects.syncDisk()
            daemon.syncStorage()
            tree = daemon.projects.project(key: key)?.tree
            let mode = try FileManager.default.attributesOfItem(atPath: data + "/projects/\(key)/project.json")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, transport) = ProjectFixture.daemon(200, store: store)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let holdsData = editor.request("project/share", ["root": .string((data as NSString).deletingLastPathComponent)])
        #expect(holdsData["error"]?["message"]?.stringValue?.contains("data directory") == true, "the secrets are never shared: \(holdsData)")
        let project = try #require(daemon.projects.project(key: key))
        // Started by the server: it listens again on the port the line holds.
        let schedule = ManualSchedule()
        daemon.projects.start(schedule: schedule.schedule)
        #expect(transport.listened.map(\.port) == [listenedBefore], "\(transport.listened)")
        #expect(project.tree == tree && project.active && project.root == root)
        #expect(project.known.count == 3, "what was on disk is known again")
        // Nothing changed on disk: nothing to read; sharing again gives the same line.
        daemon.projects.scanDisk(project)
        #expect(daemon.documents.count == 3)
        #expect(ProjectFixture.share(daemon, root: root)["result"]?["line"] == line)
    }

    @Test func theTimerReadsWhatTheWatcherSawAndWritesWhatChanged() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, _) = ProjectFixture.daemon(210)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let schedule = ManualSchedule()
        daemon.projects.start(schedule: schedule.schedule)
        #expect(schedule.due.count == 1 && schedule.due.first?.delay == ProjectService.writeDelay)
        schedule.runDue()   // the first scan after sharing: nothing changed
        let readme = try #require(project.tree.view.files[try ProjectPath("README.md")])
        let document = try #require(daemon.documents["@\(key)/\(readme)"])
        let revision = document.revision
        // A change on disk: the watcher tells the next tick, which reads it (no re-scan due yet).
        try ProjectFixture.write(Array("# Hello\nagain\n".utf8), to: root + "/README.md")
        schedule.runDue()
        #expect(document.text.string == "# Hello\nagain\n" && document.revision != revision)
        // A change of the document: the next tick writes it.
        var scratch = document.text
        scratch.replica = ReplicaID(78)
        try daemon.router.contributeFromOutside(scratch.replace(0..<1, with: Array("##".unicodeScalars)), to: document)
        schedule.runDue()
        #expect(ProjectFixture.read(root + "/README.md") == "## Hello\nagain\n")
        #expect(schedule.due.count == 1, "one tick at a time")
    }

    @Test func aDamagedFormatsFrameIsRefused() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, _) = ProjectFixture.daemon(220)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let link = try ProjectFixture.link(to: daemon, key: key)
        let file = try #require(daemon.projects.project(key: key)?.tree.operations.first?.file)
        let good = ProjectFormats.encode([(file, FileFormat(crlf: true, bom: false, finalNewline: true))])
        try daemon.projects.receiveProjectFrame(key: key, payload: good, from: link)
        #expect(daemon.projects.project(key: key)?.formats[file]?.crlf == true)
        for bad in [[ProjectFormats.tag, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], Array(good.dropLast()), good + [0], [ProjectFormats.tag, 1, 1, 1, 0x80]] {
            #expect(throws: ProjectFrameError.self) { try daemon.projects.receiveProjectFrame(key: key, payload: bad, from: link) }
        }
        let general = try daemon.peerLinks.admit(incoming: false, remoteHost: nil) { id, _ in RecordingLink(id: id, scope: .general) }
        #expect(throws: ProjectFrameError.self) { try daemon.projects.receiveProjectFrame(key: key, payload: good, from: general) }
    }

    @Test func aFileDeletedByAPeerWhileOpenComesBackWhenItsChangeIsSaved() throws {
        let root = try ProjectFixture.folder(Self.files)
        let (daemon, _) = ProjectFixture.daemon(230)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        let path = root + "/README.md"
        let uri = try #require(editor.request("document/open", ["file": .string(path), "text": "# Hello\n", "ifShared": true])["result"]?["uri"]?.stringValue)
        let file = try #require(project.view.files[try ProjectPath("README.md")])
        // The partner deletes it while it is open here: the file stays under the buffer.
        let delete = ProjectTree.Operation(file: file, path: nil, timestamp: LamportTimestamp(counter: 1000, replica: ReplicaID(999)))
        try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode([delete]), from: link)
        daemon.projects.syncDisk()
        #expect(project.view.paths[file] == nil && FileManager.default.fileExists(atPath: path))
        // The editor saves a change and closes: the file is not removed but comes back to the tree.
        try ProjectFixture.write(Array("# Hello\nkept\n".utf8), to: path)
        _ = editor.request("document/close", ["uri": .string(uri)])
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(path) == "# Hello\nkept\n", "a change on disk is never removed unread")
        daemon.projects.scanDisk(project)
        daemon.projects.syncDisk()
        #expect(project.view.paths[file]?.string == "README.md")
        #expect(try link.takeOperations().contains { $0.file == file && $0.path?.string == "README.md" })
        #expect(daemon.documents[uri]?.text.string == "# Hello\nkept\n" && ProjectFixture.read(path) == "# Hello\nkept\n")
    }
}
