import Foundation
import Glibc
import QuireProject
import ReplicatingTypes
import Testing

/// A project folder others may write in (`/tmp`, a group-writable folder): what another user may
/// have put there (their file or folder, a hard link to a file of ours outside the project, a
/// link, a FIFO) is not shared by the scan, not read by the reader, and not written through by
/// the writer; in a folder only its owner may write in, nothing changes. Tests that give a file
/// away need root (`chown`); the others pass the owner compared (`FolderTrust.owner`).
@Suite struct FolderTrustTests {
    static let nobody: UInt32 = 65534
    static var isRoot: Bool { geteuid() == 0 }

    func paths(_ result: ProjectScanner.Result) -> [String] { result.files.map(\.path.string) }
    func reason(_ path: String, in result: ProjectScanner.Result) -> ProjectScanner.Reason? {
        result.leftOut.first { $0.path == path }?.reason
    }

    /// Another user's file and folder, a hard link to a file outside, a link and a FIFO, in a
    /// folder anyone may write in: each left out with its reason (the scan does not block on the
    /// FIFO); ours are shared. Made the owner's own folder again, another user's file and the
    /// hard link are shared (the owner put them there), a link and a FIFO still are not.
    @Test(.enabled(if: isRoot)) func aFolderAnyoneWritesInSharesOnlyWhatTheOwnerPutThere() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "the owner's private text\n")
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        try folder.write("mine.txt", "mine\n")
        try folder.write("theirs.txt", "planted\n")
        #expect(chown(folder.path + "/theirs.txt", Self.nobody, Self.nobody) == 0)
        try folder.write("their-folder/inside.txt", "planted too\n")
        #expect(chown(folder.path + "/their-folder", Self.nobody, Self.nobody) == 0)
        #expect(link(outside.path + "/secret.txt", folder.path + "/linked.txt") == 0)
        try folder.link("symlink.txt", to: outside.path + "/secret.txt")
        #expect(mkfifo(folder.path + "/fifo.txt", 0o666) == 0)
        try folder.write("sub/deeper.txt", "mine, deeper\n")

        let scan = try ProjectScanner().scan(root: folder.path)
        #expect(paths(scan) == ["mine.txt", "sub/deeper.txt"])
        #expect(reason("theirs.txt", in: scan) == .anotherUsersFile(uid: Self.nobody))
        #expect(reason("their-folder", in: scan) == .anotherUsersFolder(uid: Self.nobody))
        #expect(reason("linked.txt", in: scan) == .hardLinked(links: 2))
        #expect(reason("symlink.txt", in: scan) == .symbolicLink)
        #expect(reason("fifo.txt", in: scan) == .notRegularFile)
        #expect(reason("theirs.txt", in: scan)?.description.contains("belongs to another user (uid 65534)") == true)

        #expect(chmod(folder.path, 0o755) == 0)
        let own = try ProjectScanner().scan(root: folder.path)
        #expect(paths(own) == ["linked.txt", "mine.txt", "sub/deeper.txt", "their-folder/inside.txt", "theirs.txt"])
        #expect(reason("symlink.txt", in: own) == .symbolicLink)
        #expect(reason("fifo.txt", in: own) == .notRegularFile)
    }

    /// A folder the owner owns and only the owner may write in, inside one anyone may write in,
    /// is the owner's: what is in it is shared. A group-writable folder deeper down is checked
    /// on its own. The owner compared is a parameter, so this runs as any user.
    @Test func theOwnerComparedDecidesAndEachFolderIsCheckedOnItsOwn() throws {
        let folder = try TemporaryFolder()
        try folder.write("top.txt", "top\n")
        try folder.write("private/inner.txt", "inner\n")
        try folder.write("group/shared.txt", "group\n")
        #expect(chmod(folder.path, 0o700) == 0)
        #expect(chmod(folder.path + "/group", 0o775) == 0)
        // As ourselves: everything is ours.
        #expect(paths(try ProjectScanner().scan(root: folder.path)) == ["group/shared.txt", "private/inner.txt", "top.txt"])
        // As someone else, in our folders: a folder only we (not that owner, not root) may write
        // in counts as one others may write in, so our folders and files are "another user's".
        let other = FolderTrust(owner: geteuid() &+ 4242)
        if geteuid() != 0 {
            // Its folder, in /tmp (which anyone may write in), is itself another user's folder to
            // that owner: not entered.
            let refused = #expect(throws: ProjectScanner.Failure.self) { try ProjectScanner(trust: other).scan(root: folder.path) }
            #expect(refused?.description.contains("the project folder is a folder of another user's") == true)
            return
        }
        // As root: root's folders are trusted, so only the group-writable one refuses root's file.
        let scan = try ProjectScanner(trust: other).scan(root: folder.path)
        #expect(paths(scan) == ["private/inner.txt", "top.txt"])
        #expect(reason("group/shared.txt", in: scan) == .anotherUsersFile(uid: 0))
    }

    /// An ignore file another user put in a folder others may write in (or a hard-linked one)
    /// is not read: its rules would decide which of the owner's files leave the machine, so a
    /// planted `.quireignore` holding `!.env` would share the owner's ignored secrets (before,
    /// it did). The owner's own ignore files there still apply.
    @Test(.enabled(if: isRoot)) func anIgnoreFileAnotherUserPutThereBringsNothingBack() throws {
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        try folder.write(".gitignore", ".env\nbuild/\n")
        try folder.write(".env", "TOKEN=the owner's secret\n")
        try folder.write("build/key.pem", "the owner's key\n")
        try folder.write("notes.md", "mine\n")
        try folder.write(".quireignore", "!.env\n!build/\nnotes.md\n")
        #expect(chown(folder.path + "/.quireignore", Self.nobody, Self.nobody) == 0)
        let scan = try ProjectScanner().scan(root: folder.path)
        #expect(paths(scan) == [".gitignore", "notes.md"], "the planted rules neither share .env nor hide notes.md")
        #expect(reason(".quireignore", in: scan) == .anotherUsersFile(uid: Self.nobody))
        // A folder of the owner's whose ignore file is a hard link (to a file of the owner's elsewhere).
        let outside = try TemporaryFolder()
        try outside.write("rules", "!.env\n")
        try FileManager.default.removeItem(atPath: folder.path + "/.quireignore")
        #expect(link(outside.path + "/rules", folder.path + "/.quireignore") == 0)
        let linked = try ProjectScanner().scan(root: folder.path)
        #expect(paths(linked) == [".gitignore", "notes.md"])
        #expect(reason(".quireignore", in: linked) == .hardLinked(links: 2))
        // In a folder only the owner may write in, the same file is the owner's choice.
        #expect(chmod(folder.path, 0o755) == 0)
        #expect(paths(try ProjectScanner().scan(root: folder.path)) == [".env", ".gitignore", ".quireignore", "notes.md"])
    }

    /// A file shared by itself is held to the same rules: a hard link in a folder anyone may
    /// write in is left out (it may be a file of ours from elsewhere).
    @Test func aFileSharedByItselfWithTwoLinksInAnOpenFolderIsLeftOut() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "private\n")
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        #expect(link(outside.path + "/secret.txt", folder.path + "/notes.md") == 0)
        let scan = try ProjectScanner().scan(root: folder.path, file: try ProjectPath("notes.md"))
        #expect(scan.files.isEmpty)
        #expect(reason("notes.md", in: scan) == .hardLinked(links: 2))
    }

    /// The reader refuses what the scan would leave out, as opened: a file swapped for another
    /// user's (or a hard link) after the scan is not read, nor one under another user's folder.
    @Test func theReaderRefusesAFileSwappedInAfterTheScan() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "private\n")
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        try folder.write("notes.md", "mine\n")
        #expect(try ProjectReader.text(of: ProjectPath("notes.md"), root: folder.path) == "mine\n")
        try FileManager.default.removeItem(atPath: folder.path + "/notes.md")
        #expect(link(outside.path + "/secret.txt", folder.path + "/notes.md") == 0)
        let linked = #expect(throws: ProjectReader.Failure.self) { try ProjectReader.text(of: ProjectPath("notes.md"), root: folder.path) }
        #expect(linked?.description.contains("hard links") == true)
        // Another owner compared: our own file counts as another user's.
        try folder.write("other.md", "text\n")
        let other = #expect(throws: ProjectReader.Failure.self) {
            try ProjectReader.text(of: ProjectPath("other.md"), root: folder.path, trust: FolderTrust(owner: geteuid() &+ 1))
        }
        #expect(other?.description.contains("another user") == true)   // the file's (root's folder) or, not as root, the folder's
    }

    /// An editor's open asks `reasonToLeaveOut` before making a path a file of the project: a
    /// new file in our own folder may be made; a link, a FIFO, a hard link or a path under a
    /// link in a folder anyone may write in may not.
    @Test func aPathIsClassifiedLikeTheScanWithoutReadingIt() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "private\n")
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        try folder.write("mine.txt", "mine\n")
        try folder.link("dir", to: outside.path)
        try folder.link("symlink.txt", to: outside.path + "/secret.txt")
        #expect(mkfifo(folder.path + "/fifo", 0o666) == 0)
        #expect(link(outside.path + "/secret.txt", folder.path + "/linked.txt") == 0)
        let scanner = ProjectScanner()
        #expect(scanner.reasonToLeaveOut(try ProjectPath("mine.txt"), root: folder.path) == nil)
        #expect(scanner.reasonToLeaveOut(try ProjectPath("new/file.txt"), root: folder.path) == nil)
        #expect(scanner.reasonToLeaveOut(try ProjectPath("dir/secret.txt"), root: folder.path) == .symbolicLink)
        #expect(scanner.reasonToLeaveOut(try ProjectPath("symlink.txt"), root: folder.path) == .symbolicLink)
        #expect(scanner.reasonToLeaveOut(try ProjectPath("fifo"), root: folder.path) == .notRegularFile)
        #expect(scanner.reasonToLeaveOut(try ProjectPath("linked.txt"), root: folder.path) == .hardLinked(links: 2))
        #expect(scanner.reasonToLeaveOut(try ProjectPath("mine.txt/x"), root: folder.path) == .notRegularFile)
    }

    /// The writer in a folder anyone may write in: another user's folder is never written
    /// into, another user's file and a hard link read as `.other` (held, never replaced), a
    /// file replaced by a link after the plan is not written through, and a replaced file
    /// never lends set-user or set-group bits to the text written.
    @Test(.enabled(if: isRoot)) func theWriterNeverWritesThroughWhatAnotherUserPutThere() throws {
        let outside = try TemporaryFolder()
        try outside.write("secret.txt", "private\n")
        let folder = try TemporaryFolder()
        #expect(chmod(folder.path, 0o1777) == 0)
        try folder.makeFolder("theirs")
        #expect(chown(folder.path + "/theirs", Self.nobody, Self.nobody) == 0)
        try folder.write("planted.txt", "theirs\n")
        #expect(chown(folder.path + "/planted.txt", Self.nobody, Self.nobody) == 0)
        #expect(link(outside.path + "/secret.txt", folder.path + "/linked.txt") == 0)
        let disk = DiskProject(root: folder.path)
        #expect(disk.entry(at: try ProjectPath("planted.txt")) == .other)
        #expect(disk.entry(at: try ProjectPath("linked.txt")) == .other)
        #expect(disk.entry(at: try ProjectPath("theirs/x.txt")) == .other)
        let into = #expect(throws: DiskProject.Failure.self) { try disk.write("peer text\n", to: ProjectPath("theirs/x.txt")) }
        #expect(into?.description.contains("belongs to another user") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/theirs").isEmpty)
        #expect(throws: DiskProject.Failure.self) { try disk.write("peer text\n", to: ProjectPath("planted.txt")) }
        #expect(throws: DiskProject.Failure.self) { try disk.write("peer text\n", to: ProjectPath("linked.txt")) }
        #expect(try String(contentsOfFile: outside.path + "/secret.txt", encoding: .utf8) == "private\n")
        #expect(try String(contentsOfFile: folder.path + "/planted.txt", encoding: .utf8) == "theirs\n")

        // Planned against a regular file of ours, then replaced by a link before the write.
        try folder.write("notes.md", "known\n")
        let notes = try ProjectPath("notes.md")
        let file = FileID(replica: ReplicaID(1), serial: 1)
        let plan = ProjectWriter.plan(wanted: [file: .init(path: notes, text: "new\n")], known: [file: .init(path: notes, text: "known\n")], open: [], disk: disk)
        #expect(plan.actions == [.write(notes, "new\n")])
        try FileManager.default.removeItem(atPath: folder.path + "/notes.md")
        try folder.link("notes.md", to: outside.path + "/secret.txt")
        #expect(throws: DiskProject.Failure.self) { try disk.perform(plan.actions) }
        #expect(try String(contentsOfFile: outside.path + "/secret.txt", encoding: .utf8) == "private\n")

        // A file of ours with set-user and set-group bits: the text written gets neither.
        try folder.write("run.sh", "#!/bin/sh\n")
        #expect(chmod(folder.path + "/run.sh", 0o6755) == 0)
        try disk.write("#!/bin/sh\necho peer\n", to: ProjectPath("run.sh"))
        var info = stat()
        #expect(stat(folder.path + "/run.sh", &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o755)
    }
}
