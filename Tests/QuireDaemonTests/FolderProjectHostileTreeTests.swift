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
