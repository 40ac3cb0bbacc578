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
        #expect(watcher.takeEvents() == false, "only the pass's temporary files and their renames, but \(watcher.lastChange)")
        #expect(watcher.takeEvents() == false, "nothing left, but \(watcher.lastChange)")
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
        #expect(watcher.takeEvents() == false, "the folder's creation and the file are the pass's own, but \(watcher.lastChange)")

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

    /// A pass's removals and moves (a peer deleted or renamed a file) and the folders it empties
    /// are its own: told to the watch before the pass (`expect`), each matched by its folder and
    /// name. A folder it removed is watched again when it comes back.
    @Test func aPassesMovesAndRemovalsAreItsOwn() throws {
        let (root, watcher) = try watched(["a.txt": Array("a\n".utf8), "b.txt": Array("b\n".utf8), "sub/c.txt": Array("c\n".utf8)],
                                          name: "own-moves")
        watcher.watch(folders: ["sub"])
        let actions: [ProjectWriter.Action] = [.remove(try ProjectPath("b.txt")), .remove(try ProjectPath("sub/c.txt")),
                                               .rename(from: try ProjectPath("a.txt"), to: try ProjectPath("moved.txt")),
                                               .write(try ProjectPath("w.txt"), "w\n"), .removeFolderIfEmpty(try ProjectPath("sub"))]
        watcher.expect(actions)
        try pass(root).perform(actions)
        watcher.passDone()
        #expect(!FileManager.default.fileExists(atPath: root + "/sub"))
        #expect(ProjectFixture.read(root + "/moved.txt") == "a\n")
        #expect(watcher.takeEvents() == false, "only the pass's removals, move and write, but \(watcher.lastChange)")
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: false)
        #expect(watcher.takeEvents() == true, "a folder made by someone else")
        #expect(watcher.watch(folders: ["sub"]) == ["sub"], "the removed folder's watch ended; watched again")
        try ProjectFixture.write(Array("theirs\n".utf8), to: root + "/sub/d.txt")
        #expect(watcher.takeEvents() == true, "a file written in the folder watched again")
    }

    /// Another program's removal or move at the same moment as a pass's still counts, and so
    /// does one of a name the pass was to remove but did not get to (its pass is done).
    @Test func anotherProgramsMoveOrRemovalAtTheSameMomentIsSeen() throws {
        let files = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"].reduce(into: [String: [UInt8]]()) { $0[$1] = Array("\($1)\n".utf8) }
        let (root, watcher) = try watched(files, name: "own-moves-outside")
        var actions: [ProjectWriter.Action] = [.remove(try ProjectPath("a.txt"))]
        watcher.expect(actions)
        try pass(root).perform(actions)
        #expect(unlink(root + "/c.txt") == 0)
        watcher.passDone()
        #expect(watcher.takeEvents() == true, "another program's removal")

        actions = [.rename(from: try ProjectPath("b.txt"), to: try ProjectPath("b2.txt"))]
        watcher.expect(actions)
        try pass(root).perform(actions)
        #expect(rename(root + "/d.txt", root + "/d2.txt") == 0)
        watcher.passDone()
        #expect(watcher.takeEvents() == true, "another program's move")

        // The pass fails at its first removal (the file is gone): its second is never made.
        actions = [.remove(try ProjectPath("missing.txt")), .remove(try ProjectPath("e.txt"))]
        watcher.expect(actions)
        #expect(throws: DiskProject.Failure.self) { try pass(root).perform(actions) }
        watcher.passDone()
        #expect(watcher.takeEvents() == false, "\(watcher.lastChange)")
        #expect(unlink(root + "/e.txt") == 0)
        #expect(watcher.takeEvents() == true, "a removal after the pass, of a name it was to remove")
    }

    /// A pass that writes more files than the watch's queue holds events (16,384 by default, some
    /// 5 a file) reads the queue as it goes (`betweenGroups`): its writes are still its own, where
    /// the queue read only after the pass overflows and reads as a change (the control).
    @Test(arguments: [true, false]) func aLongPassReadsTheWatchAsItGoes(draining: Bool) throws {
        let (root, watcher) = try watched([:], name: "own-long-\(draining)")
        var disk = pass(root)
        if draining { disk.betweenGroups = { watcher.drain() } }
        let actions = try (0..<4_000).map { ProjectWriter.Action.write(try ProjectPath("f\($0).h"), "<\($0)>\n") }
        watcher.expect(actions)
        try disk.perform(actions)
        watcher.passDone()
        let changed = watcher.takeEvents()
        let overflowed = watcher.lastChange.contains { $0.mask & UInt32(IN_Q_OVERFLOW) != 0 }
        if draining {
            // A process another test spawns just then holds a copy of a file the pass had open
            // until its `exec`, so that file's close comes late, after its rename: a close-write
            // of the file's own name. That is neither an overflow nor anyone else's write.
            let notLateCloses = watcher.lastChange.filter { $0.mask != UInt32(IN_CLOSE_WRITE) }
            #expect(!changed || notLateCloses.isEmpty, "read as it went: every event its own, but \(watcher.lastChange)")
        } else {
            #expect(changed && overflowed, "the queue overflowed: \(watcher.lastChange)")
        }
    }
}
