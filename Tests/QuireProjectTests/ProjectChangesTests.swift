import QuireProject
import ReplicatingTypes
import Testing

@Suite struct ProjectChangesTests {
    func file(_ n: UInt64) -> FileID { FileID(replica: ReplicaID(1), serial: n) }

    func known(_ pairs: [(UInt64, String, String)]) throws -> [FileID: ProjectWriter.Wanted] {
        var result: [FileID: ProjectWriter.Wanted] = [:]
        for (n, path, text) in pairs { result[file(n)] = ProjectWriter.Wanted(path: try ProjectPath(path), text: text) }
        return result
    }

    func disk(_ pairs: [(String, String)]) throws -> [ProjectPath: String] {
        var result: [ProjectPath: String] = [:]
        for (path, text) in pairs { result[try ProjectPath(path)] = text }
        return result
    }

    @Test func aCheckoutBecomesEditsCreatesDeletesAndRenames() throws {
        let before = try known([(1, "README.md", "hello\n"), (2, "src/a.py", "A\n"), (3, "src/b.py", "B\n"), (4, "old.txt", "old\n")])
        // As after `git checkout other`: README edited, b.py moved by `git mv`, old.txt gone, new.txt new.
        let after = try disk([("README.md", "hello, world\n"), ("src/a.py", "A\n"), ("lib/b.py", "B\n"), ("new.txt", "new\n")])
        let changes = ProjectChanges.between(known: before, disk: after)
        #expect(changes.edits == [file(1): "hello, world\n"])
        #expect(changes.renames == [file(3): try ProjectPath("lib/b.py")])
        #expect(changes.deletes == [file(4)])
        #expect(changes.creates == [try ProjectPath("new.txt"): "new\n"])
        #expect(ProjectChanges.between(known: before, disk: try disk([("README.md", "hello\n"), ("src/a.py", "A\n"), ("src/b.py", "B\n"), ("old.txt", "old\n")])).isEmpty)
    }

    @Test func identicalTextsPairInPathOrder() throws {
        // Two empty files moved at once, and a third empty file created: the pairing is by path
        // order on both sides, whatever order the dictionaries list them in.
        let before = try known([(1, "a/__init__.py", ""), (2, "b/__init__.py", "")])
        let after = try disk([("x/__init__.py", ""), ("y/__init__.py", ""), ("z/__init__.py", "")])
        let changes = ProjectChanges.between(known: before, disk: after)
        #expect(changes.renames == [file(1): try ProjectPath("x/__init__.py"), file(2): try ProjectPath("y/__init__.py")])
        #expect(changes.creates == [try ProjectPath("z/__init__.py"): ""])
        #expect(changes.deletes.isEmpty && changes.edits.isEmpty)
    }

    /// Applied to a tree and written back, the changes reproduce the disk.
    @Test func changesAppliedToTheTreeGiveTheDiskBack() throws {
        var tree = ProjectTree(replica: ReplicaID(1))
        var texts: [FileID: String] = [:]
        var before: [FileID: ProjectWriter.Wanted] = [:]
        for (path, text) in [("a", "1"), ("b", "2"), ("c/d", "3")] {
            let id = try tree.create(at: ProjectPath(path)).file
            texts[id] = text
            before[id] = ProjectWriter.Wanted(path: try ProjectPath(path), text: text)
        }
        let after = try disk([("a", "1 edited"), ("e/d", "3"), ("f", "new")])
        let changes = ProjectChanges.between(known: before, disk: after)
        for (id, text) in changes.edits { texts[id] = text }
        for (id, path) in changes.renames { _ = try tree.move(id, to: path) }
        for id in changes.deletes { _ = try tree.delete(id) }
        for (path, text) in changes.creates { texts[try tree.create(at: path).file] = text }
        var shown: [ProjectPath: String] = [:]
        for (id, path) in tree.view.paths { shown[path] = texts[id] }
        #expect(shown == after)
    }
}
