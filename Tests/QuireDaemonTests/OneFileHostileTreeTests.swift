import Foundation
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A peer of a project of one file that turns hostile (a modified daemon: ours never sends
/// these) and sends tree operations naming another path of the folder: under the one file (as
/// if it were a folder), or moving the one file away. No such operation is taken, so the file
/// stays on disk with its text, stays shared, and can always be made again.
@Suite(.serialized) struct OneFileHostileTreeTests {
    /// A daemon sharing `notes.md` of a fresh folder by itself, and a link of its project.
    static func shared(_ label: String, base: UInt64) throws -> (Daemon, String, String, SharedProject, RecordingLink) {
        let (daemon, _) = ProjectFixture.daemon(base)
        let root = try OneFileProjectTests.folder(label)
        let key = try #require(ProjectFixture.share(daemon, root: root + "/notes.md")["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        return (daemon, root, key, project, link)
    }

    /// A file claimed under the one file's name (`notes.md/evil`) would make that name a folder
    /// of the tree: the one file would show nowhere, be removed from disk, and never come back
    /// (its path no longer free), with nothing any member sees to undo it.
    @Test func aFileClaimedUnderTheOneFileIsNotTaken() throws {
        let (daemon, root, key, project, link) = try Self.shared("hostile-under", base: 41_000)
        let file = try #require(project.view.files[try ProjectPath("notes.md")])
        let other = try ProjectFixture.link(to: daemon, key: key)
        other.frames = []
        let planted = ProjectTree.Operation(file: FileID(replica: ReplicaID(77), serial: 1), path: try ProjectPath("notes.md/evil"),
                                            timestamp: LamportTimestamp(counter: 50, replica: ReplicaID(77)))
        try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode([planted]), from: link)
        #expect(try !project.tree.knows(planted.file) && project.view.files[ProjectPath("notes.md")] == file, "\(project.tree.operations)")
        #expect(try other.takeOperations().isEmpty, "nothing relayed to the other members")
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(root + "/notes.md") == "# notes\nfirst line\n", "the file stays on disk")
        // Deleted and made again, it comes back as ever.
        try FileManager.default.removeItem(atPath: root + "/notes.md")
        daemon.projects.scanDisk(project)
        try ProjectFixture.write(Array("again\n".utf8), to: root + "/notes.md")
        daemon.projects.scanDisk(project)
        #expect(try project.view.files[ProjectPath("notes.md")] == file)
        #expect(link.state != .closed, "a refused operation does not cut the link")
    }

    /// The one file moved to another path (a neighbour's name, or one beside it) is not taken:
    /// nothing is written there, and the file stays where it is, with its text.
    @Test func theOneFileMovedAwayIsNotTaken() throws {
        let (daemon, root, key, project, link) = try Self.shared("hostile-move", base: 42_000)
        let file = try #require(project.view.files[try ProjectPath("notes.md")])
        for (counter, target) in [(50, "run.sh"), (51, "secret.txt"), (52, "sub/other.md")] as [(UInt64, String)] {
            let moved = ProjectTree.Operation(file: file, path: try ProjectPath(target), timestamp: LamportTimestamp(counter: counter, replica: ReplicaID(77)))
            try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode([moved]), from: link)
            #expect(project.tree.claimedPath(of: file)?.string == "notes.md", "\(target): \(project.tree.operations)")
        }
        daemon.projects.syncDisk()
        #expect(ProjectFixture.read(root + "/notes.md") == "# notes\nfirst line\n" && !FileManager.default.fileExists(atPath: root + "/run.sh"))
        #expect(ProjectFixture.read(root + "/secret.txt") == "not shared\n" && ProjectFixture.read(root + "/sub/other.md") == "not shared either\n")
        // A delete of the one file is a writer's to make, and is taken.
        let deleted = ProjectTree.Operation(file: file, path: nil, timestamp: LamportTimestamp(counter: 60, replica: ReplicaID(77)))
        try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode([deleted]), from: link)
        #expect(project.view.files.isEmpty)
    }

    /// A path that is not UTF-8 cannot be a `String` without U+FFFD standing for its odd bytes,
    /// and that names another file: the one whose name holds U+FFFD (a decoy anyone who may
    /// write in the folder, `/tmp` say, can make). A share whose path resolves to such a name
    /// (here through a link) is refused; the decoy is not shared.
    @Test func aPathThatIsNotUTF8IsRefusedNotTakenForAnother() throws {
        let (daemon, _) = ProjectFixture.daemon(44_000)
        let root = try ProjectFixture.folder(["caf\u{FFFD}.txt": Array("the decoy\n".utf8)], name: "not-utf8")
        let odd: [UInt8] = Array((root + "/caf").utf8) + [0xE9] + Array(".txt".utf8) + [0]
        let made = odd.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        #expect(made >= 0)
        close(made)
        let target: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8) + [0]
        let linked = target.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { symlink($0.baseAddress!, root + "/link.txt") }
        }
        #expect(linked == 0)
        for path in [root + "/link.txt", root] {
            let reply = ProjectFixture.share(daemon, root: path)
            if path == root {
                // The folder itself is UTF-8: shared, with the odd name left out, not the decoy twice.
                #expect(reply["result"]?["files"] == 1, "\(reply)")
                continue
            }
            #expect(reply["error"]?["code"] == -32602 && reply["error"]?["message"]?.stringValue?.contains("not UTF-8") == true, "\(reply)")
        }
        #expect(daemon.projects.projects.values.allSatisfy { $0.file == nil }, "no project of the decoy")
    }

    /// Two projects of one file, each named `notes.md` (two strangers' lines), joined into one
    /// folder before the first one's file came (the folder still empty): both would keep
    /// `notes.md` there, one file with two documents, each project's text reaching the other's
    /// members. The second join is refused, naming the first, as a folder project's would be.
    @Test func aSecondProjectIsNotJoinedIntoTheFolderOfAnother() throws {
        let (daemon, _) = ProjectFixture.daemon(45_000)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let directory = DaemonProcess.temporaryDirectory("onefile-twice") + "/notes.md"
        func line(_ byte: UInt8, singleFile: Bool = true) throws -> String {
            try JoinLine(name: "notes.md", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: byte, count: 32),
                         fingerprint: Array(repeating: byte, count: 16), singleFile: singleFile).encoded
        }
        let first = editor.request("project/join", ["line": .string(try line(1)), "directory": .string(directory)])
        let key = try #require(first["result"]?["key"]?.stringValue, "\(first)")
        #expect(OneFileProjectTests.files(in: directory).isEmpty, "nothing came yet")
        for (byte, singleFile) in [(2, true), (3, false)] as [(UInt8, Bool)] {
            let second = editor.request("project/join", ["line": .string(try line(byte, singleFile: singleFile)), "directory": .string(directory)])
            #expect(second["error"]?["code"] == -32602 && second["error"]?["message"]?.stringValue?.contains("the project notes.md") == true, "\(second)")
        }
        #expect(daemon.projects.projects.count == 1 && daemon.projects.project(key: key)?.root == directory, "the refused joins made nothing")
        // A file of another name may share the folder, as two files of one folder shared by themselves do.
        let otherName = try JoinLine(name: "other.md", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: 4, count: 32),
                                     fingerprint: Array(repeating: 4, count: 16), singleFile: true).encoded
        #expect(editor.request("project/join", ["line": .string(otherName), "directory": .string(directory)])["result"] != nil)
        // Joining the same line again into its own folder still gives the same project.
        #expect(editor.request("project/join", ["line": .string(try line(1)), "directory": .string(directory)])["result"]?["key"] == .string(key))
    }

    /// Another user on the machine, where a file shared by itself lies in a folder anyone may
    /// write in (`/tmp`): once the owner's file is deleted (by the owner, a writer's delete, an
    /// editor's save), that user may make the file again; what they put is not taken (it would
    /// reach every member as the owner's change), and such a file is not shared to begin with.
    /// In the owner's own folder, a file of another user's may still be shared. (Needs root to
    /// give a file away.)
    @Test(.enabled(if: geteuid() == 0)) func anotherUsersFileInAFolderAnyoneWritesIsNotTaken() throws {
        let (daemon, _) = ProjectFixture.daemon(47_000)
        let root = try OneFileProjectTests.folder("anyone-writes")
        #expect(chmod(root, 0o1777) == 0)
        let key = try #require(ProjectFixture.share(daemon, root: root + "/notes.md")["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let uri = try #require(project.view.files.values.first.map(project.uri(of:)))
        try FileManager.default.removeItem(atPath: root + "/notes.md")
        daemon.projects.scanDisk(project)
        #expect(project.view.files.isEmpty)
        try ProjectFixture.write(Array("planted by another user\n".utf8), to: root + "/notes.md")
        #expect(chown(root + "/notes.md", 65534, 65534) == 0)
        daemon.projects.scanDisk(project)
        #expect(project.view.files.isEmpty, "another user's file is not taken")
        #expect(daemon.projects.documentName(ofFile: root + "/notes.md") == nil, "nor named to an editor")
        #expect(daemon.registry.document(uri)?.text.string.contains("planted") != true)
        // Given back to the owner, it is the owner's file again.
        #expect(chown(root + "/notes.md", geteuid(), getegid()) == 0)
        daemon.projects.scanDisk(project)
        #expect(project.view.files.count == 1)

        try ProjectFixture.write(Array("theirs\n".utf8), to: root + "/theirs.md")
        #expect(chown(root + "/theirs.md", 65534, 65534) == 0)
        let refused = ProjectFixture.share(daemon, root: root + "/theirs.md")
        #expect(refused["error"]?["message"]?.stringValue?.contains("belongs to another user (uid 65534)") == true, "\(refused)")
        #expect(chmod(root, 0o755) == 0)
        #expect(ProjectFixture.share(daemon, root: root + "/theirs.md")["result"]?["files"] == 1, "in the owner's own folder")
    }

    /// A folder project's line with the single-file mark spliced on (or a hostile host): the
    /// joiner takes the file named as the project only; the folder's other files reach neither
    /// its tree nor its disk.
    @Test func aJoinerOfOneFileTakesNothingElseFromItsHost() throws {
        let (daemon, _) = ProjectFixture.daemon(48_000)
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let directory = DaemonProcess.temporaryDirectory("onefile-spliced") + "/proj"
        let line = try JoinLine(name: "proj", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: 9, count: 32),
                                fingerprint: Array(repeating: 9, count: 16), singleFile: true).encoded
        let key = try #require(editor.request("project/join", ["line": .string(line), "directory": .string(directory)])["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        let host = ReplicaID(99)
        let operations = try ["a.txt", "src/b.txt", "proj/x", "proj"].enumerated().map { index, path in
            ProjectTree.Operation(file: FileID(replica: host, serial: UInt64(index + 1)), path: try ProjectPath(path),
                                  timestamp: LamportTimestamp(counter: UInt64(index + 1), replica: host))
        }
        try daemon.projects.receiveProjectFrame(key: key, payload: ProjectTree.Operation.encode(operations), from: link)
        #expect(project.tree.operations.compactMap(\.path?.string) == ["proj"], "\(project.tree.operations)")
        daemon.projects.syncDisk()
        #expect(OneFileProjectTests.files(in: directory).allSatisfy { $0 == "proj" }, "\(OneFileProjectTests.files(in: directory))")
    }
}
