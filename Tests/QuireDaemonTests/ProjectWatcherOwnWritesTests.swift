import Foundation
import Glibc
import Logging
@testable import QuireDaemon
import QuireProject
import Testing

/// The folder watch tells a disk pass's own writes from everyone else's (`ProjectWatcher`,
/// `ProjectService.watchWritten`): a pass's writes make no scan of the whole tree, and a change by
/// anyone else at the same moment still does. Each test makes the events itself and reads them
/// once, so nothing waits on timing (inotify queues an event before the call that made it returns).
@Suite(.serialized) struct ProjectWatcherOwnWritesTests {
    private func watched(_ files: [String: [UInt8]], name: String) throws -> (String, ProjectWatcher) {
        let root = try ProjectFixture.folder(files, name: name)
        let watcher = try #require(ProjectWatcher(root: root, logger: Logger(label: "test")))
        return (root, watcher)
    }

    private func pass(_ root: String) -> DiskProject {
        var disk = DiskProject(root: root)
        disk.forPass = true
        return disk
    }

    @Test func aPassesWritesAndRenamesIntoPlaceAreItsOwn() throws {
        let (root, watcher) = try watched(["a.txt": Array("a\n".utf8)], name: "own-writes")
        let written = try pass(root).perform([.write(try ProjectPath("a.txt"), "changed\n"), .write(try ProjectPath("b.txt"), "new\n")])
        #expect(written.count == 2)
        #expect(ProjectFixture.read(root + "/a.txt") == "changed\n")
        #expect(watcher.takeEvents() == false, "only the pass's temporary files and their renames")
        #expect(watcher.takeEvents() == false, "nothing left")
    }

    @Test func anEditorsSaveIsNotAPassesWrite() throws {
        let (root, watcher) = try watched(["a.txt": Array("a\n".utf8)], name: "own-save")
        try DiskProject(root: root).write(Array("saved\n".utf8), to: try ProjectPath("a.txt"), syncingFolder: true)
        #expect(watcher.takeEvents() == true)
    }

    @Test func anOutsideChangeAtTheSameMomentAsAPassIsSeen() throws {
        let (root, watcher) = try watched(["a.txt": Array("a\n".utf8), "c.txt": Array("c\n".utf8)], name: "own-outside")
        try pass(root).perform([.write(try ProjectPath("a.txt"), "changed\n")])
        try ProjectFixture.write(Array("outside\n".utf8), to: root + "/c.txt")
        #expect(watcher.takeEvents() == true, "a write to another file")

        try pass(root).perform([.write(try ProjectPath("a.txt"), "again\n")])
        try ProjectFixture.write(Array("outside\n".utf8), to: root + "/a.txt")
        #expect(watcher.takeEvents() == true, "a write to the file the pass just wrote")

        // Another program's save by rename, right after the pass's rename.
        try pass(root).perform([.write(try ProjectPath("a.txt"), "third\n")])
        try ProjectFixture.write(Array("theirs\n".utf8), to: root + "/.a.txt.swp")
        #expect(rename(root + "/.a.txt.swp", root + "/a.txt") == 0)
        #expect(watcher.takeEvents() == true, "a rename into place that is not the pass's")
    }

    /// A folder a pass made is read once when it is first watched: holding only what the pass
    /// wrote, its creation is the pass's own; holding a file someone put there before the watch
    /// (which made no event), the project is scanned.
    @Test func aFolderAPassMadeIsItsOwnOnlyWhenItHoldsOnlyWhatThePassWrote() throws {
        let (daemon, _) = ProjectFixture.daemon(49_400)
        let root = try ProjectFixture.folder(["top.txt": Array("top\n".utf8)], name: "own-folders")
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        let project = try #require(daemon.projects.project(key: key))
        let watcher = try #require(project.watcher)
        _ = watcher.takeEvents()
        project.needsScan = false

        let written = try pass(root).perform([.write(try ProjectPath("new/deep/f.txt"), "f\n")])
        daemon.projects.watchWritten(["new", "new/deep"], written: written, in: project)
        #expect(!project.needsScan)
        #expect(watcher.takeEvents() == false, "the folder's creation and the file are the pass's own")

        let more = try pass(root).perform([.write(try ProjectPath("other/g.txt"), "g\n")])
        try ProjectFixture.write(Array("theirs\n".utf8), to: root + "/other/theirs.txt")
        daemon.projects.watchWritten(["other"], written: more, in: project)
        #expect(project.needsScan, "a file the pass did not write, put there before the watch")
        #expect(watcher.takeEvents() == true)

        project.needsScan = false
        let changed = try pass(root).perform([.write(try ProjectPath("third/h.txt"), "h\n")])
        try ProjectFixture.write(Array("changed\n".utf8), to: root + "/third/h.txt")
        daemon.projects.watchWritten(["third"], written: changed, in: project)
        #expect(project.needsScan, "the pass's file changed before the watch")
    }
}
