import Foundation
import Glibc
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import Testing

/// A folder project in a folder others may write in (`/tmp`-like, mode 1777): what another user
/// on the machine puts there (their file, their folder, a hard link to a file of ours outside the
/// project, a FIFO, a link) is never shared with a member, never taken as a change, never made a
/// file of the project by an editor's open, and the log says what was refused. Needs root to give
/// files away (`chown`).
@Suite(.serialized) struct FolderProjectHostileTreeTests {
    static let nobody: UInt32 = 65534

    @Test(.enabled(if: geteuid() == 0)) func whatAnotherUserPutsInAnOpenFolderIsNeitherSharedNorTaken() throws {
        let log = LogCapture()
        let daemon = PeerTestNetwork().makeDaemon(48_000, log: log)
        let transport = RecordingTransport()
        daemon.transport = transport
        let outside = try ProjectFixture.folder(["secret.txt": Array("the owner's private text\n".utf8)], name: "outside")
        let root = try ProjectFixture.folder(["mine.md": Array("mine\n".utf8), "theirs.md": Array("planted before\n".utf8)], name: "open-folder")
        #expect(chmod(root, 0o1777) == 0)
        #expect(chown(root + "/theirs.md", Self.nobody, Self.nobody) == 0)
        #expect(link(outside + "/secret.txt", root + "/linked.md") == 0)

        // Shared: ours only; the reply says what was left out and why.
        let reply = ProjectFixture.share(daemon, root: root)
        let result = try #require(reply["result"], "\(reply)")
        #expect(result["files"] == 1)
        let skipped = (result["skipped"]?.arrayValue ?? []).map { ($0["path"]?.stringValue ?? "", $0["reason"]?.stringValue ?? "") }
        #expect(skipped.contains { $0.0 == "theirs.md" && $0.1.contains("belongs to another user (uid 65534)") }, "\(skipped)")
        #expect(skipped.contains { $0.0 == "linked.md" && $0.1.contains("2 hard links") }, "\(skipped)")
        let key = try #require(result["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        #expect(project.view.files.keys.map(\.string) == ["mine.md"])

        // Planted while shared: another user's file and folder, a hard link, a FIFO, a link.
        try ProjectFixture.write(Array("planted later\n".utf8), to: root + "/later.md")
        #expect(chown(root + "/later.md", Self.nobody, Self.nobody) == 0)
        try ProjectFixture.write(Array("in their folder\n".utf8), to: root + "/theirs/inside.md")
        #expect(chown(root + "/theirs", Self.nobody, Self.nobody) == 0)
        #expect(link(outside + "/secret.txt", root + "/linked-later.md") == 0)
        #expect(mkfifo(root + "/pipe.md", 0o666) == 0)
        #expect(symlink(outside + "/secret.txt", root + "/symlink.md") == 0)
        daemon.projects.scanDisk(project)   // returns: the FIFO is never opened for reading
        #expect(project.view.files.keys.map(\.string) == ["mine.md"], "nothing planted is taken")
        for name in ["theirs.md", "later.md", "theirs/inside.md", "linked-later.md", "pipe.md", "symlink.md"] {
            #expect(daemon.projects.documentName(ofFile: root + "/" + name) == nil, "\(name) is not made a file of the project by an editor's open")
        }
        #expect(project.view.files.keys.map(\.string) == ["mine.md"])
        #expect(daemon.projects.documentName(ofFile: root + "/new.md") != nil, "a new file of ours (not there yet) may be made")

        let said = log.all.joined(separator: "\n")
        #expect(said.contains(": later.md is not shared or taken: it belongs to another user (uid 65534)"), "\(said)")
        #expect(said.contains("theirs is not shared or taken: a folder of another user's (uid 65534)"), "\(said)")
        #expect(said.contains("linked-later.md is not shared or taken: it has 3 hard links"), "\(said)")
        #expect(said.contains("pipe.md is not shared or taken: not a regular file"), "\(said)")
        #expect(said.contains("opened by an editor is not made a file of the project"), "\(said)")
        daemon.projects.scanDisk(project)
        #expect(log.all.filter { $0.contains(": later.md is not shared or taken") }.count == 1, "each refusal is said once")

        // Given back to the owner (and the hard link gone), the file is the owner's and is taken.
        #expect(chown(root + "/later.md", geteuid(), getegid()) == 0)
        daemon.projects.scanDisk(project)
        #expect(Set(project.view.files.keys.map(\.string)) == ["later.md", "mine.md", "new.md"], "new.md: made by the editor's open above")
        #expect(try String(contentsOfFile: outside + "/secret.txt", encoding: .utf8) == "the owner's private text\n")
    }

    /// A `.quireignore` another user put in a folder others may write in does not decide what of
    /// the owner's is shared: neither the scan nor an editor's open of an ignored file (`.env`)
    /// takes its `!.env` (before, the open made the owner's secret a file of the project).
    @Test(.enabled(if: geteuid() == 0)) func anIgnoreFileAnotherUserPlantedDecidesNothing() throws {
        let (daemon, _) = ProjectFixture.daemon(48_200)
        let root = try ProjectFixture.folder([".gitignore": Array(".env\n".utf8), ".env": Array("TOKEN=secret\n".utf8),
                                              "notes.md": Array("mine\n".utf8)], name: "planted-ignore")
        #expect(chmod(root, 0o1777) == 0)
        let reply = ProjectFixture.share(daemon, root: root)
        let key = try #require(reply["result"]?["key"]?.stringValue, "\(reply)")
        let project = try #require(daemon.projects.project(key: key))
        try ProjectFixture.write(Array("!.env\n".utf8), to: root + "/.quireignore")
        #expect(chown(root + "/.quireignore", Self.nobody, Self.nobody) == 0)
        daemon.projects.scanDisk(project)
        #expect(daemon.projects.documentName(ofFile: root + "/.env") == nil, "the owner's ignored file is not made a file of the project")
        #expect(Set(project.view.files.keys.map(\.string)) == [".gitignore", "notes.md"])
        // The same rule written by the owner is the owner's choice.
        #expect(chown(root + "/.quireignore", geteuid(), getegid()) == 0)
        #expect(daemon.projects.documentName(ofFile: root + "/.env") != nil)
    }

    /// A hard link made later to a file the project already shares (in a folder others may write
    /// in: by the owner's backup tool, or by another user where `protected_hardlinks` is off) does
    /// not change the file: it is held (not read, not written) while linked, not taken for deleted,
    /// which would delete it at every member (before, it was); once the link is gone it is read again.
    @Test(.enabled(if: geteuid() == 0)) func aHardLinkMadeLaterToASharedFileDeletesItNowhere() throws {
        let (daemon, _) = ProjectFixture.daemon(48_400)
        let outside = try ProjectFixture.folder([:], name: "link-elsewhere")
        let root = try ProjectFixture.folder(["mine.md": Array("mine\n".utf8), "other.md": Array("other\n".utf8)], name: "linked-later")
        #expect(chmod(root, 0o1777) == 0)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        #expect(Glibc.link(root + "/mine.md", outside + "/backup.md") == 0)
        daemon.projects.scanDisk(project)
        #expect(Set(project.view.files.keys.map(\.string)) == ["mine.md", "other.md"], "not taken for deleted")
        #expect(try link.takeOperations().isEmpty, "nothing sent to the members")
        // Changed on disk while linked: not read (a link in may be another file's text).
        try ProjectFixture.write(Array("changed\n".utf8), to: outside + "/backup.md")
        daemon.projects.scanDisk(project)
        let file = try #require(project.view.files[try ProjectPath("mine.md")])
        #expect(daemon.document(project.uri(of: file))?.text.string == "mine\n")
        // The link gone: the file is the project's again and its change is read.
        #expect(unlink(outside + "/backup.md") == 0)
        daemon.projects.scanDisk(project)
        #expect(daemon.document(project.uri(of: file))?.text.string == "changed\n")
    }

    /// The project's folder itself replaced by another user's (they may rename it away where its
    /// parent is a folder others may write in, as a group-writable team folder): the empty folder
    /// is not taken for the project's files all deleted (which would delete them at every
    /// member), and nothing of the project's is written into it (where they would read it).
    @Test(.enabled(if: geteuid() == 0)) func theRootReplacedByAnotherUsersFolderIsNotEntered() throws {
        let (daemon, _) = ProjectFixture.daemon(48_500)
        let parent = try ProjectFixture.folder([:], name: "team-open")
        #expect(chmod(parent, 0o777) == 0)
        let root = parent + "/proj"
        try ProjectFixture.write(Array("mine\n".utf8), to: root + "/mine.md")
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let link = try ProjectFixture.link(to: daemon, key: key)
        try FileManager.default.moveItem(atPath: root, toPath: parent + "/proj.old")
        #expect(mkdir(root, 0o777) == 0 && chown(root, Self.nobody, Self.nobody) == 0)
        daemon.projects.scanDisk(project)
        #expect(project.view.files.keys.map(\.string) == ["mine.md"], "not taken for deleted")
        #expect(try link.takeOperations().isEmpty, "nothing sent to the members")
        #expect(daemon.projects.documentName(ofFile: root + "/new.md") == nil)
        #expect(throws: DiskProject.Failure.self) { try DiskProject(root: root).write("the project's text\n", to: ProjectPath("mine.md")) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty, "nothing written into their folder")
    }

    /// An editor's open of a path with `.` or `..` in it names the file the system opens: through
    /// a real folder, the project's file; through a link in the project (`sub/..` is the parent
    /// of where the link leads), not the project's file, so the file behind it is never taken.
    @Test func dotsInAnEditorsPathNameTheFileTheSystemOpens() throws {
        let (daemon, _) = ProjectFixture.daemon(48_600)
        let outside = try ProjectFixture.folder(["notes.md": Array("outside\n".utf8), "inner/x": Array("x\n".utf8)], name: "dots-outside")
        let root = try ProjectFixture.folder(["notes.md": Array("inside\n".utf8), "real/y.md": Array("y\n".utf8)], name: "dots")
        #expect(symlink(outside + "/inner", root + "/sub") == 0)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let notes = try #require(project.view.files[try ProjectPath("notes.md")])
        for path in ["/real/../notes.md", "/./notes.md", "//notes.md", "/real/./../notes.md"] {
            #expect(daemon.projects.documentName(ofFile: root + path) == project.uri(of: notes), "\(path)")
        }
        #expect(daemon.projects.documentName(ofFile: root + "/sub/../notes.md") == nil, "outside/notes.md is not the project's")
        #expect(project.view.files.keys.map(\.string).sorted() == ["notes.md", "real/y.md"])
    }

    /// The project's folder itself swapped for a link (by anyone who may write in a folder
    /// above it: a group-writable team folder) to a private folder of the owner's: the daemon
    /// resolved the root when it was shared and follows no link on its path since, so nothing
    /// behind the link is shared or written, and the project's files are not taken for deleted
    /// (before, the next scan shared the private folder's files and deleted the project's).
    @Test func theRootSwappedForALinkSharesAndWritesNothingBehindIt() throws {
        let (daemon, _) = ProjectFixture.daemon(48_300)
        let outside = try ProjectFixture.folder(["id_key": Array("the owner's private key\n".utf8)], name: "private")
        let parent = try ProjectFixture.folder([:], name: "team")
        let root = parent + "/proj"
        try ProjectFixture.write(Array("mine\n".utf8), to: root + "/mine.md")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let opened = editor.request("document/open", ["file": .string(root + "/mine.md"), "text": "mine\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")

        try FileManager.default.moveItem(atPath: root, toPath: parent + "/moved")
        #expect(symlink(outside, root) == 0)
        daemon.projects.scanDisk(project)
        #expect(project.view.files.keys.map(\.string) == ["mine.md"], "nothing behind the link is shared, nothing taken for deleted")
        #expect(daemon.projects.documentName(ofFile: root + "/id_key") == nil)
        let refused = editor.request("document/save", ["uri": .string(uri)])
        #expect(refused["error"] != nil, "\(refused)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside) == ["id_key"], "nothing written behind the link")
    }

    /// An editor's `document/save` of a project file whose folder was replaced by a link since
    /// it was opened (by anyone who may write in the project's folder): the save is refused,
    /// saying why, and nothing is read or written through the link
    /// (before, the file behind it was merged into the shared document, then written).
    @Test func aSaveNeverWritesThroughALinkPlantedOnItsPath() throws {
        let (daemon, _) = ProjectFixture.daemon(48_100)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("outside\n".utf8)], name: "save-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: "save-link")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(ProjectFixture.share(daemon, root: root, editor: editor)["result"] != nil)
        let opened = editor.request("document/open", ["file": .string(root + "/sub/notes.md"), "text": "inside\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        #expect(uri.hasPrefix("@"))
        #expect(editor.request("document/save", ["uri": .string(uri)])["result"] != nil, "saved while nothing is planted")
        try FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
        #expect(symlink(outside + "/sub", root + "/sub") == 0)
        let refused = editor.request("document/save", ["uri": .string(uri)])
        let message = refused["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("sub/notes.md of the project save-link is not written: a symbolic link"), "\(refused)")
        #expect(ProjectFixture.read(outside + "/sub/notes.md") == "outside\n")
        #expect(daemon.document(uri)?.text.string == "inside\n", "the file behind the link is not taken in either")
        // Opened again by its path (an editor that reads through the link): not the project's file.
        editor.request("document/close", ["uri": .string(uri)])
        #expect(daemon.projects.documentName(ofFile: root + "/sub/notes.md") == nil)
    }
}

/// An editor's `document/save` of a project file races another user (or program) that swaps a
/// folder on the file's path for a link between the save's checks and its write: the write goes
/// through the project's descriptor walk from the opened root, so it never lands behind the link
/// and nothing behind it is read into the document.
@Suite(.serialized) struct SaveSwapTests {
    @Test func aLinkSwappedInAfterTheSaveChecksIsNotWrittenThrough() throws {
        let (daemon, _) = ProjectFixture.daemon(48_500)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("outside\n".utf8)], name: "swap-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: "swap-link")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(ProjectFixture.share(daemon, root: root, editor: editor)["result"] != nil)
        let opened = editor.request("document/open", ["file": .string(root + "/sub/notes.md"), "text": "inside\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        var swapped = false
        daemon.projects.beforeFileAccess = {
            guard !swapped else { return }
            swapped = true
            try? FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
            _ = symlink(outside + "/sub", root + "/sub")
        }
        let refused = editor.request("document/save", ["uri": .string(uri)])
        #expect(swapped)
        #expect(refused["error"] != nil, "\(refused)")
        #expect(ProjectFixture.read(outside + "/sub/notes.md") == "outside\n", "nothing written behind the link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside + "/sub") == ["notes.md"], "no temporary file left behind the link")
        #expect(daemon.document(uri)?.text.string == "inside\n", "the file behind the link is not read in")
        #expect(ProjectFixture.read(root + "/sub-moved/notes.md") == "inside\n")
    }
}

/// The same race on an editor's `document/open` of a project file: the folder on its path is
/// swapped for a link to a private folder holding a file of the same name after the open named
/// the file's document: nothing behind the link is read into the project's document.
@Suite(.serialized) struct OpenSwapTests {
    @Test func aLinkSwappedInAfterTheOpenNamedTheFileIsNotReadThrough() throws {
        let (daemon, _) = ProjectFixture.daemon(48_600)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("the owner's private notes\n".utf8)], name: "open-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: "open-link")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let key = try #require(ProjectFixture.share(daemon, root: root, editor: editor)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let uri = project.uri(of: try #require(project.view.files[try ProjectPath("sub/notes.md")]))
        var swapped = false
        daemon.projects.beforeFileAccess = {
            guard !swapped else { return }
            swapped = true
            try? FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
            _ = symlink(outside + "/sub", root + "/sub")
        }
        let opened = editor.request("document/open", ["file": .string(root + "/sub/notes.md"), "text": "inside\n"])
        #expect(swapped)
        #expect(daemon.document(uri)?.text.string.contains("private") == false, "\(opened)")
        #expect(ProjectFixture.read(outside + "/sub/notes.md") == "the owner's private notes\n")
    }
}

/// A project file's document opened again by its name (no `file`: a reconnect, a jump), after
/// someone who may write in the project folder replaced a folder on the file's path by a link to
/// a private folder with a file of the same name: the binding's check for outside changes reads
/// through the project's walk, so nothing behind the link is merged into the shared document.
@Suite(.serialized) struct BoundFileLinkTests {
    @Test func reopeningByNameNeverMergesAFileBehindAPlantedLink() throws {
        let (daemon, _) = ProjectFixture.daemon(48_700)
        let outside = try ProjectFixture.folder(["sub/notes.md": Array("the owner's private notes\n".utf8)], name: "bound-outside")
        let root = try ProjectFixture.folder(["sub/notes.md": Array("inside\n".utf8)], name: "bound-link")
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        #expect(ProjectFixture.share(daemon, root: root, editor: editor)["result"] != nil)
        let opened = editor.request("document/open", ["file": .string(root + "/sub/notes.md"), "text": "inside\n"])
        let uri = try #require(opened["result"]?["uri"]?.stringValue, "\(opened)")
        editor.request("document/close", ["uri": .string(uri)])
        try FileManager.default.moveItem(atPath: root + "/sub", toPath: root + "/sub-moved")
        #expect(symlink(outside + "/sub", root + "/sub") == 0)
        let again = editor.request("document/open", ["uri": .string(uri), "text": "inside\n"])
        #expect(again["result"] != nil, "\(again)")
        #expect(daemon.document(uri)?.text.string == "inside\n", "nothing behind the link is merged")
        let told = editor.take("window/showMessage").compactMap { $0["params"]?["message"]?.stringValue }
        #expect(told.contains { $0.contains("sub/notes.md of the project bound-link is not read") }, "\(told)")
    }
}
