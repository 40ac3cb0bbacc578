import Foundation
import QuireProject
import ReplicatingTypes
import Testing

/// The tree's rules for each concurrent case, written out (`protocol/decisions/project-tree.md`).
@Suite struct ProjectTreeScriptTests {
    func path(_ text: String) throws -> ProjectPath { try ProjectPath(text) }

    /// Two replicas that start from the same tree.
    func pair(_ setup: (inout ProjectTree) throws -> Void = { _ in }) rethrows -> (ProjectTree, ProjectTree) {
        var a = ProjectTree(replica: ReplicaID(1))
        try setup(&a)
        var b = ProjectTree(replica: ReplicaID(2))
        b.merge(with: a)
        return (a, b)
    }

    func exchange(_ a: inout ProjectTree, _ b: inout ProjectTree, _ fromA: [ProjectTree.Operation], _ fromB: [ProjectTree.Operation]) throws {
        for operation in fromB { try a.apply(operation) }
        for operation in fromA { try b.apply(operation) }
        #expect(a == b)
        #expect(a.view == b.view)
    }

    @Test func concurrentCreateOfOnePathKeepsBothNewestAtThePath() throws {
        var (a, b) = try pair()
        let fromA = try a.create(at: path("notes.md"))
        let fromB = try b.create(at: path("notes.md"))
        try exchange(&a, &b, [fromA], [fromB])
        // Same counter: replica 2's claim is the newer one.
        #expect(a.view.files[try path("notes.md")] == fromB.file)
        #expect(a.view.paths[fromA.file] == (try path("notes.conflict-\(fromA.file).md")))
        #expect(a.view.conflicted == [fromA.file])
        // Renaming the loser away settles the conflict everywhere.
        let settle = try a.move(fromA.file, to: path("notes-alice.md"))
        try b.apply(settle)
        #expect(b.view.conflicted.isEmpty)
        #expect(b.view.files.count == 2)
    }

    @Test func deleteVersusRenameTheNewerWins() throws {
        var file = FileID(replica: ReplicaID(0), serial: 0)
        var (a, b) = try pair { tree in file = try tree.create(at: path("old.txt")).file }
        let deletion = try a.delete(file)
        let rename = try b.move(file, to: path("new.txt"))
        try exchange(&a, &b, [deletion], [rename])
        #expect(rename.timestamp > deletion.timestamp)
        #expect(a.view.paths[file] == (try path("new.txt")), "the rename is newer: the file lives on at its new name")

        // The other way round: the deletion newer (made after seeing more).
        var (c, d) = try pair { tree in file = try tree.create(at: path("old.txt")).file }
        let other = try c.create(at: path("other.txt"))
        let later = try c.delete(file)
        let earlier = try d.move(file, to: path("new.txt"))
        try exchange(&c, &d, [other, later], [earlier])
        #expect(later.timestamp > earlier.timestamp)
        #expect(c.view.paths[file] == nil)
        // The file is deleted, not forgotten: moving it back revives it with the same identity.
        let revive = try d.move(file, to: path("new.txt"))
        try c.apply(revive)
        #expect(c.view.paths[file] == (try path("new.txt")))
    }

    @Test func renameVersusRenameOfOneFileEndsAtOnePath() throws {
        var file = FileID(replica: ReplicaID(0), serial: 0)
        var (a, b) = try pair { tree in file = try tree.create(at: path("f.txt")).file }
        let toX = try a.move(file, to: path("x.txt"))
        let toY = try b.move(file, to: path("y.txt"))
        try exchange(&a, &b, [toX], [toY])
        #expect(a.view.paths[file] == (try path("y.txt")))
        #expect(a.view.files.count == 1, "one file, one path: never duplicated")
    }

    @Test func renameOntoAnExistingPath() throws {
        var old = FileID(replica: ReplicaID(0), serial: 0), moved = old
        var (a, b) = try pair { tree in
            old = try tree.create(at: path("p.txt")).file
            moved = try tree.create(at: path("q.txt")).file
        }
        // Locally, `mv q.txt p.txt` deletes what was at p.txt: no conflict.
        var local = a
        let operations = try local.move(moved, replacing: path("p.txt"))
        #expect(operations.count == 2)
        #expect(local.view.files == [try path("p.txt"): moved])
        #expect(throws: ProjectTree.Refusal.pathTaken(try path("p.txt"))) { try local.move(old, to: path("p.txt")) }

        // Concurrently, A moves q.txt onto p.txt while B, not knowing, renames p.txt to r.txt.
        let fromA = try a.move(moved, replacing: path("p.txt"))
        let fromB = try b.move(old, to: path("r.txt"))
        try exchange(&a, &b, fromA, [fromB])
        // The delete of p (A) and the rename of p (B) race on p's register: B's is newer.
        #expect(a.view.paths[moved] == (try path("p.txt")))
        #expect(a.view.paths[old] == (try path("r.txt")))
        #expect(a.view.conflicted.isEmpty)
    }

    @Test func deletingAFolderKeepsAFileCreatedInItConcurrently() throws {
        var (a, b) = try pair { tree in
            _ = try tree.create(at: path("src/a.c"))
            _ = try tree.create(at: path("src/b.c"))
            _ = try tree.create(at: path("README"))
        }
        let deletions = try a.deleteFolder("src")
        #expect(deletions.count == 2)
        let created = try b.create(at: path("src/c.c"))
        try exchange(&a, &b, deletions, [created])
        #expect(a.view.files.keys.map(\.string).sorted() == ["README", "src/c.c"])
        #expect(throws: ProjectTree.Refusal.noSuchFolder("nothing")) { try a.deleteFolder("nothing") }
    }

    @Test func aFileWhereTheOtherSideMadeAFolderGivesWay() throws {
        var (a, b) = try pair()
        let file = try a.create(at: path("lib"))
        let inside = try b.create(at: path("lib/x.c"))
        try exchange(&a, &b, [file], [inside])
        #expect(a.view.paths[inside.file] == (try path("lib/x.c")))
        #expect(a.view.paths[file.file] == (try path("lib.conflict-\(file.file)")))
        // Locally, neither can be made while the other is there.
        #expect(throws: ProjectTree.Refusal.pathTaken(try path("lib"))) { try a.create(at: path("lib")) }
        #expect(throws: ProjectTree.Refusal.folderInTheWay("lib/x.c/y")) { try a.create(at: path("lib/x.c/y")) }
    }

    @Test func movingAFolderWhileAFileIsCreatedInItLeavesTheNewFileBehind() throws {
        var (a, b) = try pair { tree in _ = try tree.create(at: path("old/a.txt")) }
        let moves = try a.moveFolder("old", to: path("new"))
        let created = try b.create(at: path("old/b.txt"))
        try exchange(&a, &b, moves, [created])
        #expect(a.view.files.keys.map(\.string).sorted() == ["new/a.txt", "old/b.txt"])
    }

    @Test func badOperationsFromPeersAreRefusedOrHarmless() throws {
        var tree = ProjectTree(replica: ReplicaID(1))
        // The largest timestamp: the tree takes it, and then refuses local changes rather than trap.
        let last = ProjectTree.Operation(file: FileID(replica: ReplicaID(5), serial: 1), path: try path("x"), timestamp: LamportTimestamp(counter: .max, replica: ReplicaID(5)))
        try tree.apply(last)
        #expect(throws: ProjectTree.Refusal.clockExhausted) { try tree.create(at: path("y")) }
        // Two different writes with one timestamp (a faulty peer) still converge.
        let stamp = LamportTimestamp(counter: 3, replica: ReplicaID(7))
        let file = FileID(replica: ReplicaID(7), serial: 1)
        let one = ProjectTree.Operation(file: file, path: try path("one"), timestamp: stamp)
        let two = ProjectTree.Operation(file: file, path: try path("two"), timestamp: stamp)
        var p = ProjectTree(replica: ReplicaID(1)), q = ProjectTree(replica: ReplicaID(2))
        try p.apply(one); try p.apply(two)
        try q.apply(two); try q.apply(one)
        #expect(p == q)
        // A path that breaks the rules does not decode.
        let json = #"[{"file":{"replica":1,"serial":1},"path":"../etc/passwd","timestamp":{"counter":1,"replica":1}}]"#
        #expect(throws: (any Error).self) { try JSONDecoder().decode([ProjectTree.Operation].self, from: Data(json.utf8)) }
    }
}

@Suite struct ProjectTreeCodingTests {
    @Test func operationsRoundTripAndBadBytesAreRefused() throws {
        var tree = ProjectTree(replica: ReplicaID(3))
        var operations: [ProjectTree.Operation] = []
        for name in ["a.txt", "src/é/main.swift", "x"] { operations.append(try tree.create(at: ProjectPath(name))) }
        operations.append(try tree.delete(operations[2].file))
        operations.append(ProjectTree.Operation(file: FileID(replica: ReplicaID(.max), serial: .max), path: nil, timestamp: LamportTimestamp(counter: .max, replica: ReplicaID(.max))))
        let bytes = ProjectTree.Operation.encode(operations)
        #expect(try ProjectTree.Operation.decode(bytes) == operations)
        #expect(bytes.count < 120)

        #expect(throws: BinaryDecodingError.unsupportedVersion(2)) { try ProjectTree.Operation.decode([2] + bytes.dropFirst()) }
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(bytes + [0]) }
        for length in 0..<bytes.count {
            #expect(throws: BinaryDecodingError.self, "cut at \(length)") { try ProjectTree.Operation.decode(Array(bytes.prefix(length))) }
        }
        // A path that escapes, a path too long, a count past the bound, a bad kind.
        func one(kind: UInt8, path: [UInt8]) -> [UInt8] {
            var writer = BinaryWriter()
            writer.write(1); writer.writeVarint(1)
            for value: UInt64 in [1, 1, 1, 1] { writer.writeVarint(value) }
            writer.write(kind)
            writer.writeVarint(UInt64(path.count)); writer.write(contentsOf: path)
            return writer.bytes
        }
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(one(kind: 1, path: Array("../etc/passwd".utf8))) }
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(one(kind: 1, path: [0x66, 0xFF])) }
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(one(kind: 1, path: Array(repeating: 0x61, count: 2000))) }
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(one(kind: 7, path: [])) }
        var huge = BinaryWriter()
        huge.write(1); huge.writeVarint(UInt64(ProjectTree.Operation.maximumBatch + 1))
        #expect(throws: BinaryDecodingError.self) { try ProjectTree.Operation.decode(huge.bytes) }
    }
}
