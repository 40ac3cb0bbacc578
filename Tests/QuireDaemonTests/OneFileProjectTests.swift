import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A file shared by itself is a project of one file (protocol/decisions/roles.md, *A file shared
/// by itself*), on real daemons over loopback: its own line and roster, a writer and a reader
/// joined by invitations, the reader refused at every daemon, the writer converging, nothing
/// else of the folder ever shared (a file made later on either side), revocation; and the
/// overlap rule with folders.
@Suite(.serialized) struct OneFileProjectTests {
    /// A folder holding `notes.md` and a neighbour that is never shared.
    static func folder(_ label: String) throws -> String {
        try ProjectFixture.folder(["notes.md": Array("# notes\nfirst line\n".utf8), "secret.txt": Array("not shared\n".utf8),
                                   "sub/other.md": Array("not shared either\n".utf8)], name: label)
    }

    /// An editor of `node` (made on its loop), initialized as `user`.
    static func editor(on node: RosterNode, _ user: String) throws -> TestEditor {
        try node.run { daemon in
            let editor = TestEditor(daemon: daemon)
            editor.initialize(user: user, encodings: ["utf-32"])
            return editor
        }
    }

    /// `document/open {file, ifShared, text}` as a client sends it for every file it reads; the
    /// editor then shows the document (its uri and text set).
    static func open(_ path: String, in editor: TestEditor, on node: RosterNode) throws -> JSONValue {
        let text = ProjectFixture.read(path) ?? ""
        return try node.run { _ in
            let reply = editor.request("document/open", ["file": .string(path), "ifShared": true, "text": .string(text)])
            if let uri = reply["result"]?["uri"]?.stringValue {
                editor.uri = uri
                editor.text = Array(text.unicodeScalars)
                editor.epoch = Int(reply["result"]?["epoch"]?.integerValue ?? 0)
            }
            return reply
        }
    }

    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test func aFileSharedByItselfHasItsOwnRosterAndNothingElseOfItsFolderIsShared() throws {
        let ann = try RosterNode(21_000, user: "ann"), bob = try RosterNode(22_000, user: "bob"), cat = try RosterNode(23_000, user: "cat")
        defer { for node in [ann, bob, cat] { node.stop() } }
        let root = try Self.folder("onefile")
        let notes = root + "/notes.md"
        let shared = try ann.share(notes)
        let key = try #require(shared["key"]?.stringValue)
        #expect(shared["name"] == "notes.md" && shared["files"] == 1 && shared["root"] == .string(root) && shared["file"] == .string(notes), "\(shared)")
        let line = try #require(shared["line"])
        #expect(try JoinLine(parsing: try #require(line.stringValue)).singleFile)
        // Sharing the same file again gives the same project, key and line.
        let again = try #require(ann.request("project/share", ["root": .string(notes)])["result"])
        #expect(again["key"] == .string(key) && again["line"] == line)
        let listed = ann.request("project/list", [:])["result"]?["projects"]?.arrayValue ?? []
        #expect(listed.count == 1 && listed.first?["file"] == .string(notes) && listed.first?["root"] == .string(root), "\(listed)")

        // A writer joins from the share line, a reader from a read invitation used once.
        let invited = try #require(ann.request("project/invite", ["key": .string(key), "role": "read", "once": true])["result"])
        let bobDirectory = DaemonProcess.temporaryDirectory("onefile-bob") + "/notes.md"
        let catDirectory = DaemonProcess.temporaryDirectory("onefile-cat") + "/notes.md"
        #expect(bob.request("project/join", ["line": line, "directory": .string(bobDirectory)])["result"] != nil)
        #expect(cat.request("project/join", ["line": try #require(invited["line"]), "directory": .string(catDirectory)])["result"] != nil)
        #expect(waitUntil(timeout: 30) { [ann, bob, cat].allSatisfy { $0.roster(key)?.roles.count == 3 } },
                "rosters: \([ann, bob, cat].map { $0.roster(key)?.roles.count ?? -1 })")
        #expect(bob.ownRole(key) == .write && cat.ownRole(key) == .read && ann.role(of: cat, in: key) == .read)
        #expect(bob.project(key) { $0?.file?.string } == "notes.md" && cat.project(key) { $0?.file?.string } == "notes.md")
        // Each joiner's folder holds that one file, with its text.
        #expect(waitUntil(timeout: 30) {
            ProjectFixture.read(bobDirectory + "/notes.md") == "# notes\nfirst line\n" && ProjectFixture.read(catDirectory + "/notes.md") == "# notes\nfirst line\n"
        })
        #expect(Self.files(in: bobDirectory) == ["notes.md"] && Self.files(in: catDirectory) == ["notes.md"])

        // Editors on every side open the file by its path and join the project's document; the
        // reader's shows it read-only and its edit is refused. (An open buffer is never written
        // under, so each editor closes before its side's disk is looked at.)
        let annEditor = try Self.editor(on: ann, "ann"), bobEditor = try Self.editor(on: bob, "bob"), catEditor = try Self.editor(on: cat, "cat")
        let annOpen = try Self.open(notes, in: annEditor, on: ann)
        let uri = try #require(annOpen["result"]?["uri"]?.stringValue, "\(annOpen)")
        #expect(uri.hasPrefix("@\(key)/"))
        // The neighbours are not the project's: an editor opening them is told so, nothing is made.
        for path in [root + "/secret.txt", root + "/sub/other.md"] {
            let reply = try ann.run { _ in annEditor.request("document/open", ["file": .string(path), "ifShared": true, "text": "x\n"]) }
            #expect(reply["result"]?["shared"] == false, "\(path): \(reply)")
        }
        _ = try ann.run { _ in annEditor.request("document/close", ["uri": .string(uri)]) }
        #expect(try Self.open(bobDirectory + "/notes.md", in: bobEditor, on: bob)["result"]?["uri"] == .string(uri))
        let catOpen = try Self.open(catDirectory + "/notes.md", in: catEditor, on: cat)
        #expect(catOpen["result"]?["uri"] == .string(uri) && catOpen["result"]?["readOnly"] == true, "\(catOpen)")
        let refused = try cat.run { _ in catEditor.edit(0..<0, with: "cat was here ") }
        #expect(refused["error"]?["code"] == .integer(Int64(ResponseError.readOnlyCode)), "\(refused)")
        _ = try cat.run { _ in catEditor.request("document/close", ["uri": .string(uri)]) }

        // The writer's edit converges everywhere, on the documents and the disks.
        let written = try bob.run { _ in bobEditor.edit(0..<0, with: "bob: ") }
        #expect(written["error"] == nil, "\(written)")
        let expected = "bob: # notes\nfirst line\n"
        #expect(waitUntil(timeout: 30) {
            ProjectFixture.read(notes) == expected && ProjectFixture.read(catDirectory + "/notes.md") == expected
                && [ann, cat].allSatisfy { node in ((try? node.run { $0.document(uri)?.text.string }) ?? nil) == expected }
        }, "ann: \(ProjectFixture.read(notes) ?? "-"), cat: \(ProjectFixture.read(catDirectory + "/notes.md") ?? "-")")

        // A modified reader's daemon that takes its editor's edit anyway: every other daemon refuses it.
        let claimsWrite = FakeProjectAccess()
        claimsWrite.own[key] = .write
        claimsWrite.peers = [ann.publicKey: .owner, bob.publicKey: .write]
        try cat.run { $0.projectAccess = claimsWrite }
        let forger = try Self.editor(on: cat, "cat")
        let forgerOpen = try cat.run { _ in forger.open(uri, text: expected) }
        #expect(forgerOpen["result"] != nil && forgerOpen["result"]?["readOnly"] == nil, "the modified daemon takes edits: \(forgerOpen)")
        #expect(try cat.run { _ in forger.edit(0..<0, with: "FORGED ") }["error"] == nil)
        #expect(waitUntil(timeout: 20) { ann.log.all.contains { $0.contains("not applied nor relayed") && $0.contains(uri) } }, "\(ann.log.all.suffix(5))")
        // bob writes once more: that reaches ann and cat, and the reader's text reached no one.
        _ = try bob.run { _ in bobEditor.deliverInbox(); return bobEditor.edit(0..<0, with: "again ") }
        #expect(waitUntil(timeout: 30) {
            ProjectFixture.read(notes)?.hasPrefix("again ") == true && ((try? cat.run { $0.document(uri)?.text.string }) ?? nil)?.contains("again ") == true
        })
        #expect(ProjectFixture.read(notes)?.contains("FORGED") == false)
        #expect(((try? ann.run { $0.document(uri)?.text.string }) ?? nil)?.contains("FORGED") == false)
        #expect(((try? bob.run { $0.document(uri)?.text.string }) ?? nil)?.contains("FORGED") == false)
        #expect(cat.links(key).count == 1, "a reader is refused, not cut")
        _ = try bob.run { _ in bobEditor.request("document/close", ["uri": .string(uri)]) }
        _ = try cat.run { _ in forger.request("document/close", ["uri": .string(uri)]) }

        // A file made later in the host's folder is not shared; nor one the writer makes beside
        // the joined file. Each is written with a change to the shared file: once that change has
        // gone across, the scan that saw the new file is done.
        try ProjectFixture.write(Array("made later\n".utf8), to: root + "/later.txt")
        try ProjectFixture.write(Array("made by bob\n".utf8), to: bobDirectory + "/bob.txt")
        #expect(waitUntil(timeout: 30) { ProjectFixture.read(bobDirectory + "/notes.md") == ProjectFixture.read(notes) })
        let onDisk = (ProjectFixture.read(notes) ?? "") + "ann's last line\n"
        try ProjectFixture.write(Array(onDisk.utf8), to: notes)
        #expect(waitUntil(timeout: 30) {
            ProjectFixture.read(bobDirectory + "/notes.md") == onDisk && ProjectFixture.read(catDirectory + "/notes.md")?.hasSuffix("ann's last line\n") == true
        }, "bob: \(ProjectFixture.read(bobDirectory + "/notes.md") ?? "-")")
        let withBob = onDisk + "bob's last line\n"
        try ProjectFixture.write(Array(withBob.utf8), to: bobDirectory + "/notes.md")
        #expect(waitUntil(timeout: 30) { ProjectFixture.read(notes) == withBob && ProjectFixture.read(catDirectory + "/notes.md")?.hasSuffix("bob's last line\n") == true })
        #expect(Self.files(in: bobDirectory) == ["bob.txt", "notes.md"] && Self.files(in: catDirectory) == ["notes.md"])
        #expect(Self.files(in: root) == ["later.txt", "notes.md", "secret.txt", "sub"], "bob's file never reached ann's folder")
        for node in [ann, bob, cat] {
            #expect(node.project(key) { $0.map { Array($0.view.paths.values.map(\.string)) } } == ["notes.md"], "\(node.user)'s project shows one file")
            #expect(node.project(key) { $0?.tree.fileCount } == 1, "\(node.user)'s tree made no other file")
        }

        // The reader is revoked: cut at once, told so.
        let revoked = ann.request("project/revoke", ["key": .string(key), "member": "cat"])
        #expect(revoked["result"] != nil && revoked["result"]?["role"] == nil, "\(revoked)")
        var removed: [JSONValue] = []
        #expect(waitUntil(timeout: 20) { removed += cat.take("project/removed"); return !removed.isEmpty && cat.links(key).isEmpty })
        #expect(removed.first?["params"]?["reason"]?.stringValue == "removed from project notes.md by an owner", "\(removed)")
        let members = ann.request("project/members", ["key": .string(key)])["result"]?["members"]?.arrayValue ?? []
        #expect(members.map { $0["role"]?.stringValue ?? "removed" } == ["owner", "write", "removed"], "\(members)")
        withExtendedLifetime([annEditor, bobEditor, catEditor, forger]) {}
        withExtendedLifetime(claimsWrite) {}
    }

    /// The file deleted and made again on disk comes back as the same file of the tree (one
    /// register, one document), so the tree never holds two files at its one path where one
    /// would hide the other; the partner's copy goes and comes back with the new text.
    @Test func theFileDeletedAndMadeAgainIsTheSameFile() throws {
        let ann = try RosterNode(27_000, user: "ann"), bob = try RosterNode(28_000, user: "bob")
        defer { for node in [ann, bob] { node.stop() } }
        let root = try Self.folder("again")
        let notes = root + "/notes.md"
        let shared = try ann.share(notes)
        let key = try #require(shared["key"]?.stringValue)
        let copy = DaemonProcess.temporaryDirectory("onefile-again") + "/notes.md"
        #expect(bob.request("project/join", ["line": try #require(shared["line"]), "directory": .string(copy)])["result"] != nil)
        #expect(waitUntil(timeout: 30) { ProjectFixture.read(copy + "/notes.md") == "# notes\nfirst line\n" })
        let file = try #require(ann.project(key) { $0?.view.paths.keys.first })
        try FileManager.default.removeItem(atPath: notes)
        #expect(waitUntil(timeout: 30) { !FileManager.default.fileExists(atPath: copy + "/notes.md") }, "the delete reached bob")
        try ProjectFixture.write(Array("# notes\nwritten anew\n".utf8), to: notes)
        #expect(waitUntil(timeout: 30) { ProjectFixture.read(copy + "/notes.md") == "# notes\nwritten anew\n" })
        for node in [ann, bob] {
            #expect(node.project(key) { $0?.tree.fileCount } == 1, "\(node.user): one file in the tree")
            #expect(node.project(key) { $0?.view.paths.keys.first } == file, "\(node.user): the same file came back")
        }
        // bob deletes and makes it again on his side: the same, the other way.
        try FileManager.default.removeItem(atPath: copy + "/notes.md")
        #expect(waitUntil(timeout: 30) { !FileManager.default.fileExists(atPath: notes) })
        try ProjectFixture.write(Array("bob's now\n".utf8), to: copy + "/notes.md")
        #expect(waitUntil(timeout: 30) { ProjectFixture.read(notes) == "bob's now\n" })
        #expect(ann.project(key) { $0?.tree.fileCount } == 1 && bob.project(key) { $0?.view.paths.keys.first } == file)
    }

    /// A joiner makes the file appear only once its host's tree came: a file put (or opened) in
    /// the joined folder before would be a second file claiming the one path.
    @Test func aJoinerMakesNoFileBeforeTheHostsTree() throws {
        let (host, _) = ProjectFixture.daemon(29_000)
        let root = try Self.folder("early")
        let line = try #require(ProjectFixture.share(host, root: root + "/notes.md")["result"]?["line"])
        let (joiner, _) = ProjectFixture.daemon(30_000)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let directory = DaemonProcess.temporaryDirectory("onefile-early") + "/notes.md"
        let key = try #require(editor.request("project/join", ["line": line, "directory": .string(directory)])["result"]?["key"]?.stringValue)
        try ProjectFixture.write(Array("typed too early\n".utf8), to: directory + "/notes.md")
        let project = try #require(joiner.projects.project(key: key))
        joiner.projects.scanDisk(project)
        #expect(project.tree.fileCount == 0, "the scan made no file")
        let opened = editor.request("document/open", ["file": .string(directory + "/notes.md"), "ifShared": true, "text": "typed too early\n"])
        #expect(opened["result"]?["shared"] == false && project.tree.fileCount == 0, "\(opened)")
    }

    /// A peer's tree operation naming another path of the folder (a modified daemon; ours never
    /// sends one) reaches no disk and no editor: the project shows its one file only.
    @Test func aPeersFileAtAnotherPathReachesNoDiskAndNoEditor() throws {
        let (daemon, _) = ProjectFixture.daemon(31_000)
        let root = try Self.folder("planted")
        let key = try #require(ProjectFixture.share(daemon, root: root + "/notes.md")["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        let planted = ProjectTree.Operation(file: FileID(replica: ReplicaID(77), serial: 1), path: try ProjectPath("run.sh"),
                                            timestamp: LamportTimestamp(counter: 50, replica: ReplicaID(77)))
        try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode([planted]), from: link)
        _ = try daemon.registry.openDocument(project.uri(of: planted.file)) { ReplicatingText("echo planted\n", replica: ReplicaID(77)) }
        #expect(project.tree.fileCount == 1, "the operation is not taken (OneFileHostileTreeTests)")
        #expect(project.view.paths.values.map(\.string) == ["notes.md"], "but the project shows its one file")
        daemon.projects.syncDisk()
        #expect(!FileManager.default.fileExists(atPath: root + "/run.sh"), "nothing written beside the file")
        #expect(daemon.projects.documentName(ofFile: root + "/run.sh") == nil)
        #expect(ProjectFixture.read(root + "/notes.md") == "# notes\nfirst line\n" && ProjectFixture.read(root + "/secret.txt") == "not shared\n")
    }

    /// One file, one document: a file in a shared folder is not shared again by itself, a folder
    /// holding a file shared by itself is not shared, and neither is a file of a joined folder.
    @Test func overlappingSharesAreRefusedNamingTheOtherProject() throws {
        let (daemon, _) = ProjectFixture.daemon(24_000)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        func share(_ path: String) -> JSONValue { editor.request("project/share", ["root": .string(path)]) }

        let folder = try ProjectFixture.folder(["a.md": Array("a\n".utf8), "deep/b.md": Array("b\n".utf8)], name: "whole")
        #expect(share(folder)["result"] != nil)
        for path in [folder + "/a.md", folder + "/deep/b.md"] {
            let refused = share(path)
            #expect(refused["error"]?["code"] == -32602, "\(refused)")
            #expect(refused["error"]?["message"]?.stringValue?.contains("lies in the folder \(folder) of the project whole, shared from this daemon") == true, "\(refused)")
        }

        let alone = try ProjectFixture.folder(["n.md": Array("n\n".utf8), "m.md": Array("m\n".utf8)], name: "alone")
        let single = try #require(share(alone + "/n.md")["result"])
        #expect(single["name"] == "n.md" && single["files"] == 1)
        for path in [alone, (alone as NSString).deletingLastPathComponent] {
            let refused = share(path)
            #expect(refused["error"]?["message"]?.stringValue?.contains("holds \(alone)/n.md, shared by itself as the project n.md") == true, "\(refused)")
        }
        // Its neighbour may be shared by itself too: two projects, one file each.
        let neighbour = try #require(share(alone + "/m.md")["result"])
        #expect(neighbour["key"] != single["key"] && neighbour["name"] == "m.md")
        #expect(share(alone + "/n.md")["result"]?["key"] == single["key"], "the same file again: the same project")

        // Stopped, the file's project no longer stands in the way; shared again, its folder does.
        #expect(editor.request("project/stop", ["key": try #require(single["key"])])["result"] != nil)
        #expect(editor.request("project/stop", ["key": try #require(neighbour["key"])])["result"] != nil)
        #expect(share(alone)["result"]?["files"] == 2)
        let blocked = share(alone + "/n.md")
        #expect(blocked["error"]?["message"]?.stringValue?.contains("of the project alone, shared from this daemon") == true, "\(blocked)")

        // What cannot be a project of one file is refused with why.
        let odd = try ProjectFixture.folder(["bin.dat": [0, 1, 2, 0], "ok.md": Array("ok\n".utf8)], name: "odd")
        #expect(share(odd + "/bin.dat")["error"]?["message"]?.stringValue?.contains("cannot be shared: binary") == true)
        try FileManager.default.createSymbolicLink(atPath: odd + "/link.md", withDestinationPath: odd + "/ok.md")
        let viaLink = try #require(share(odd + "/link.md")["result"], "a link names the file it points to")
        #expect(viaLink["file"] == .string(odd + "/ok.md") && viaLink["name"] == "ok.md")
    }

    /// A joined project of one file: its file is not shared again by itself by the joiner, and
    /// the record keeps what the project is across a restart.
    @Test func aJoinedFileIsNotSharedAgainAndTheRecordKeepsItOneFile() throws {
        let data = DaemonProcess.temporaryDirectory("onefile-record")
        let root = try Self.folder("record")
        var key = ""
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, _) = ProjectFixture.daemon(25_000, store: store)
            key = try #require(ProjectFixture.share(daemon, root: root + "/notes.md")["result"]?["key"]?.stringValue)
        }
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, _) = ProjectFixture.daemon(25_000, store: store)
        let project = try #require(daemon.projects.project(key: key))
        #expect(project.file?.string == "notes.md" && project.root == root && project.active)
        #expect(daemon.projects.project(containing: root + "/notes.md")?.key == key)
        #expect(daemon.projects.project(containing: root + "/secret.txt") == nil)
        let line = try JoinLine(parsing: try #require(ProjectFixture.share(daemon, root: root + "/notes.md")["result"]?["line"]?.stringValue))
        // The data directory keeps every project's secret: no file of it is shared by itself.
        let record = ProjectFixture.share(daemon, root: data + "/projects/\(key)/project.json")
        #expect(record["error"]?["message"]?.stringValue?.contains("lies in this daemon's data directory") == true, "\(record)")
        #expect(line.singleFile && line.name == "notes.md")

        let (joiner, _) = ProjectFixture.daemon(26_000)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let directory = DaemonProcess.temporaryDirectory("onefile-joined") + "/notes.md"
        #expect(editor.request("project/join", ["line": .string(line.encoded), "directory": .string(directory)])["result"] != nil)
        try ProjectFixture.write(Array("mine\n".utf8), to: directory + "/notes.md")
        let refused = editor.request("project/share", ["root": .string(directory + "/notes.md")])
        #expect(refused["error"]?["message"]?.stringValue?.contains("is the file of the project notes.md, joined from another daemon") == true, "\(refused)")
        #expect(editor.request("project/share", ["root": .string(directory)])["error"]?["message"]?.stringValue?.contains("holds") == true)
    }
}
