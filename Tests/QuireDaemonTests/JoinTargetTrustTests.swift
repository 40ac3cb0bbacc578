import Foundation
import Glibc
@testable import QuireDaemon
import QuireTestSupport
import Testing

/// `project/join` into a folder another user owns, in a folder others may write in (`/tmp`): its
/// owner could read and replace what is written there, and every scan refuses such a folder, so
/// the join would leave the files nowhere while warning on every pass. The join is refused at
/// once, saying why, and nothing is joined. Needs root to give the folder away (`chown`).
@Suite(.serialized) struct JoinTargetTrustTests {
    @Test(.enabled(if: geteuid() == 0)) func aJoinIntoAnotherUsersFolderInAnOpenFolderIsRefused() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "trust-host")
        let (host, _) = ProjectFixture.daemon(48_840)
        let (joiner, _) = ProjectFixture.daemon(48_850)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let open = DaemonProcess.temporaryDirectory("join-open")
        #expect(chmod(open, 0o1777) == 0)
        let theirs = open + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(chown(theirs, FolderProjectHostileTreeTests.nobody, FolderProjectHostileTreeTests.nobody) == 0)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let reply = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(theirs)])
        let message = try #require(reply["error"]?["message"]?.stringValue, "\(reply)")
        #expect(message.contains("another user") && message.contains("join into a folder of your own"), "\(message)")
        #expect(joiner.projects.projects.isEmpty, "nothing is joined")
        // A folder of one's own there is joined.
        let mine = open + "/mine"
        let joined = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(mine)])
        #expect(joined["result"]?["directory"]?.stringValue == mine, "\(joined)")
    }

    /// A link another user planted at the folder named for the join (in `/tmp`, say) is not
    /// followed: it could send the project's files into any empty folder of the person's.
    @Test(.enabled(if: geteuid() == 0)) func aJoinThroughALinkAnotherUserPlantedIsRefused() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "trust-link-host")
        let (host, _) = ProjectFixture.daemon(48_920)
        let (joiner, _) = ProjectFixture.daemon(48_930)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let open = DaemonProcess.temporaryDirectory("join-link-open")
        #expect(chmod(open, 0o1777) == 0)
        let mine = DaemonProcess.temporaryDirectory("join-link-private") + "/autostart"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
        #expect(symlink(mine, open + "/project") == 0)
        #expect(lchown(open + "/project", FolderProjectHostileTreeTests.nobody, FolderProjectHostileTreeTests.nobody) == 0)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        for requested in [open + "/project", open + "/project/sub"] {
            let reply = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(requested)])
            let message = try #require(reply["error"]?["message"]?.stringValue, "\(reply)")
            #expect(message.contains("is a symbolic link another user"), "\(message)")
        }
        #expect(joiner.projects.projects.isEmpty, "nothing is joined")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mine).isEmpty)
    }
}
