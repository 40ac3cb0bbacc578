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

    /// The folder a join makes for the project's files is the person's alone (0700): the
    /// project carries no modes, so a file the host keeps private (0600) arrived 0644 under the
    /// umask, in a folder every local user could open, and any of them read it. A folder the
    /// person made beforehand keeps the mode they gave it.
    @Test func aFolderMadeForAJoinIsOpenToItsUserOnly() throws {
        let root = try ProjectFixture.folder(["private.txt": Array("<A17> f(x)\n".utf8)], name: "private-host")
        #expect(chmod(root + "/private.txt", 0o600) == 0)
        let (host, _) = ProjectFixture.daemon(48_940)
        let (joiner, _) = ProjectFixture.daemon(48_950)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let parent = DaemonProcess.temporaryDirectory("join-private")
        #expect(chmod(parent, 0o755) == 0)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        let made = parent + "/made/proj"
        let joined = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(made)])
        #expect(joined["result"]?["directory"]?.stringValue == made, "\(joined)")
        var info = stat()
        #expect(stat(made, &info) == 0 && info.st_mode & 0o777 == 0o700, "mode \(String(info.st_mode & 0o777, radix: 8))")
        // A folder the person made is theirs to open as they like: its mode is kept.
        let (other, _) = ProjectFixture.daemon(48_960)
        let theirs = parent + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: false)
        #expect(chmod(theirs, 0o750) == 0)
        let second = TestEditor(daemon: other)
        second.initialize()
        let into = second.request("project/join", ["line": try #require(shared["line"]), "directory": .string(theirs)])
        #expect(into["result"]?["directory"]?.stringValue == theirs, "\(into)")
        #expect(stat(theirs, &info) == 0 && info.st_mode & 0o777 == 0o750)
    }

    /// A join that would make its folder inside another user's folder (`/tmp/theirs/proj`,
    /// `theirs` made by them, open to all) is refused before anything is made: its owner may
    /// rename, replace or read what is put there whatever its mode.
    @Test(.enabled(if: geteuid() == 0)) func aJoinMakingItsFolderInsideAnotherUsersFolderIsRefused() throws {
        let root = try ProjectFixture.folder(["a.txt": Array("a\n".utf8)], name: "trust-parent-host")
        let (host, _) = ProjectFixture.daemon(48_970)
        let (joiner, _) = ProjectFixture.daemon(48_980)
        let shared = try #require(ProjectFixture.share(host, root: root)["result"])
        let theirs = DaemonProcess.temporaryDirectory("join-their-parent")
        #expect(chmod(theirs, 0o777) == 0)
        #expect(chown(theirs, FolderProjectHostileTreeTests.nobody, FolderProjectHostileTreeTests.nobody) == 0)
        let editor = TestEditor(daemon: joiner)
        editor.initialize()
        for requested in [theirs + "/proj", theirs + "/deeper/proj"] {
            let reply = editor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(requested)])
            let message = try #require(reply["error"]?["message"]?.stringValue, "\(reply)")
            #expect(message.contains("another user") && message.contains("join into a folder of your own"), "\(message)")
        }
        #expect(joiner.projects.projects.isEmpty, "nothing is joined")
        #expect(try FileManager.default.contentsOfDirectory(atPath: theirs).isEmpty, "nothing is made there")
    }
}
