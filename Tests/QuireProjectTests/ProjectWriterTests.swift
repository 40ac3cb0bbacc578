import EditingTraces
import Foundation
import QuireProject
import ReplicatingTypes
import Testing

/// A disk in memory: paths to entries; folders are implied by files and can be set explicitly.
struct MemoryDisk: ProjectDisk {
    var entries: [String: DiskEntry] = [:]

    func entry(at path: ProjectPath) -> DiskEntry {
        if let entry = entries[path.string] { return entry }
        let prefix = path.string + "/"
        return entries.keys.contains { $0.hasPrefix(prefix) } ? .folder : .absent
    }

    /// Carries out a plan's actions, checking each is possible.
    mutating func perform(_ actions: [ProjectWriter.Action]) {
        for action in actions {
            switch action {
            case .write(let path, let text):
                #expect(entries[path.string] == nil || { if case .file = entries[path.string] { return true } else { return false } }())
                entries[path.string] = .file(text)
            case .remove(let path):
                #expect(entries[path.string] != nil)
                entries[path.string] = nil
            case .rename(let from, let to):
                #expect(entry(at: to) == .absent, "rename onto \(to)")
                entries[to.string] = entries[from.string]
                entries[from.string] = nil
            case .removeFolderIfEmpty:
                break
            }
        }
    }
}

@Suite struct ProjectWriterTests {
    func path(_ text: String) throws -> ProjectPath { try ProjectPath(text) }
    let f1 = FileID(replica: ReplicaID(1), serial: 1)
    let f2 = FileID(replica: ReplicaID(1), serial: 2)
    let f3 = FileID(replica: ReplicaID(1), serial: 3)

    func wanted(_ pairs: [(FileID, String, String)]) throws -> [FileID: ProjectWriter.Wanted] {
        var result: [FileID: ProjectWriter.Wanted] = [:]
        for (file, path, text) in pairs { result[file] = ProjectWriter.Wanted(path: try ProjectPath(path), text: text) }
        return result
    }

    @Test func aFreshJoinWritesEveryFileAndAgainWritesNothing() throws {
        var disk = MemoryDisk()
        let want = try wanted([(f1, "a.txt", "A"), (f2, "src/b.c", "B"), (f3, "src/lib/c.h", "C")])
        let plan = ProjectWriter.plan(wanted: want, known: [:], open: [], disk: disk)
        #expect(plan.actions.count == 3)
        #expect(plan.held.isEmpty)
        disk.perform(plan.actions)
        #expect(disk.entries["src/lib/c.h"] == .file("C"))
        let again = ProjectWriter.plan(wanted: want, known: plan.known, open: [], disk: disk)
        #expect(again.actions.isEmpty)
        #expect(again.known == want)
    }

    @Test func openFilesAreNeverTouched() throws {
        let disk = MemoryDisk(entries: ["a.txt": .file("old"), "gone.txt": .file("G"), "m.txt": .file("M")])
        let known = try wanted([(f1, "a.txt", "old"), (f2, "gone.txt", "G"), (f3, "m.txt", "M")])
        let want = try wanted([(f1, "a.txt", "new"), (f3, "moved.txt", "M")])
        let open: Set<ProjectPath> = [try path("a.txt"), try path("gone.txt"), try path("m.txt")]
        let plan = ProjectWriter.plan(wanted: want, known: known, open: open, disk: disk)
        #expect(plan.actions.isEmpty)
        #expect(plan.held == [f1: .openInEditor, f2: .openInEditor, f3: .openInEditor])
        #expect(plan.known == known, "held files keep what was known")
        let closed = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
        #expect(closed.actions == [.remove(try path("gone.txt")), .rename(from: try path("m.txt"), to: try path("moved.txt")), .write(try path("a.txt"), "new")])
    }

    @Test func aChangeOnDiskNotYetReadIsNeverOverwritten() throws {
        let disk = MemoryDisk(entries: ["a.txt": .file("typed locally"), "b.txt": .file("edited"), "c.txt": .file("someone's")])
        let known = try wanted([(f1, "a.txt", "old"), (f2, "b.txt", "B")])
        let want = try wanted([(f1, "a.txt", "new"), (f3, "c.txt", "from the tree")])
        let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
        #expect(plan.actions.isEmpty)
        #expect(plan.held == [f1: .changedOnDisk, f2: .changedOnDisk, f3: .occupied])
    }

    @Test func swappedNamesGoThroughATemporaryName() throws {
        var disk = MemoryDisk(entries: ["x": .file("X"), "y": .file("Y"), "z": .file("Z")])
        let known = try wanted([(f1, "x", "X"), (f2, "y", "Y"), (f3, "z", "Z")])
        // A three-way rotation: x -> y -> z -> x.
        let want = try wanted([(f1, "y", "X"), (f2, "z", "Y"), (f3, "x", "Z")])
        let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
        #expect(plan.held.isEmpty)
        disk.perform(plan.actions)
        #expect(disk.entries == ["y": .file("X"), "z": .file("Y"), "x": .file("Z")])
        #expect(plan.known == want)
        #expect(plan.actions.count == 4)
    }

    @Test func linksFilesAndFoldersInTheWayHoldTheFile() throws {
        let disk = MemoryDisk(entries: ["link": .symbolicLink, "file": .file("F"), "dir/inner": .file("I"), "fifo": .other])
        let want = try wanted([(f1, "link/x", "1"), (f2, "file/x", "2"), (f3, "dir", "3")])
        let plan = ProjectWriter.plan(wanted: want, known: [:], open: [], disk: disk)
        #expect(plan.actions.isEmpty)
        #expect(plan.held == [f1: .linkOnPath, f2: .notAFile, f3: .notAFile])
        let onLink = ProjectWriter.plan(wanted: try wanted([(f1, "link", "1"), (f2, "fifo", "2")]), known: [:], open: [], disk: disk)
        #expect(onLink.held == [f1: .linkOnPath, f2: .notAFile])
    }

    @Test func aTreeFromReplicasIsWrittenOnARealDiskAndFollowsRenames() throws {
        let folder = try TemporaryFolder()
        var tree = ProjectTree(replica: ReplicaID(1))
        var texts: [FileID: String] = [:]
        for (name, text) in [("README.md", "# hi\n"), ("src/main.swift", "print(1)\n"), ("src/util/a.swift", "let a = 1\n")] {
            texts[try tree.create(at: path(name)).file] = text
        }
        let disk = DiskProject(root: folder.path)
        func sync(_ known: [FileID: ProjectWriter.Wanted]) throws -> ProjectWriter.Plan {
            let want = Dictionary(uniqueKeysWithValues: tree.view.paths.map { ($0.key, ProjectWriter.Wanted(path: $0.value, text: texts[$0.key] ?? "")) })
            let plan = ProjectWriter.plan(wanted: want, known: known, open: [], disk: disk)
            try disk.perform(plan.actions)
            #expect(plan.held.isEmpty)
            return plan
        }
        var known = try sync([:]).known
        #expect(try String(contentsOfFile: folder.path + "/src/util/a.swift", encoding: .utf8) == "let a = 1\n")
        // A folder renamed, a file deleted, a text changed; a file the project does not share
        // keeps its folder, the emptied folders go.
        try folder.write("src/build.o", "not shared")
        _ = try tree.moveFolder("src", to: path("Sources"))
        _ = try tree.delete(tree.view.files[try path("README.md")]!)
        texts[tree.view.files[try path("Sources/main.swift")]!] = "print(2)\n"
        known = try sync(known).known
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).sorted()
        #expect(files == ["Sources", "Sources/main.swift", "Sources/util", "Sources/util/a.swift", "src", "src/build.o"])
        #expect(try String(contentsOfFile: folder.path + "/Sources/main.swift", encoding: .utf8) == "print(2)\n")
        #expect(try sync(known).actions.isEmpty)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder.path + "/Sources")).contains { $0.hasPrefix(".quire-write") })
    }

    @Test func theRealDiskNeverWritesThroughALink() throws {
        let outside = try TemporaryFolder()
        try outside.write("victim.txt", "untouched\n")
        let folder = try TemporaryFolder()
        try folder.link("out", to: outside.path)
        try folder.link("victim.txt", to: outside.path + "/victim.txt")
        try folder.write("script.sh", "#!/bin/sh\n")
        #expect(chmod(folder.path + "/script.sh", 0o755) == 0)
        let disk = DiskProject(root: folder.path)
        #expect(disk.entry(at: try path("out/victim.txt")) == .symbolicLink)
        #expect(disk.entry(at: try path("victim.txt")) == .symbolicLink)
        #expect(throws: DiskProject.Failure.self) { try disk.write("owned\n", to: path("out/victim.txt")) }
        #expect(throws: DiskProject.Failure.self) { try disk.write("owned\n", to: path("victim.txt")) }
        #expect(throws: DiskProject.Failure.self) { try disk.rename(path("script.sh"), to: path("out/x.sh")) }
        #expect(try String(contentsOfFile: outside.path + "/victim.txt", encoding: .utf8) == "untouched\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim.txt"])
        // An overwrite keeps the file's permissions.
        try disk.write("#!/bin/sh\necho hi\n", to: path("script.sh"))
        let mode = try FileManager.default.attributesOfItem(atPath: folder.path + "/script.sh")[.posixPermissions] as? Int
        #expect(mode == 0o755)
        #expect(disk.entry(at: try path("script.sh")) == .file("#!/bin/sh\necho hi\n"))
        #expect(throws: DiskProject.Failure.self) { try disk.rename(path("script.sh"), to: path("victim.txt")) }
    }
}

/// Random moves (swaps and rotations included), deletions, new files and edits, planned against a
/// disk that holds what is known: carried out, the disk holds exactly what is wanted, and a file
/// the project does not know is left alone.
@Suite struct ProjectWriterPropertyTests {
    static let folders = ["", "a/", "b/", "a/c/"]
    static let leaves = ["f1", "f2", "f3.txt", "f4.md", "f5"]
    static var allPaths: [String] { folders.flatMap { folder in leaves.map { folder + $0 } } }

    @Test(arguments: (1...60).map { UInt64($0) }) func plansReachTheWantedTree(seed: UInt64) throws {
        var random = EditingTraces.SeededRandom(seed: seed)
        var paths = Self.allPaths
        paths.shuffle(using: &random)
        let knownCount = random.below(12)
        var known: [FileID: ProjectWriter.Wanted] = [:]
        var disk = MemoryDisk(entries: ["a/untracked.o": .file("build output")])
        for index in 0..<knownCount {
            let file = FileID(replica: ReplicaID(1), serial: UInt64(index))
            known[file] = ProjectWriter.Wanted(path: try ProjectPath(paths[index]), text: "text \(index)")
            disk.entries[paths[index]] = .file("text \(index)")
        }
        // The wanted tree: each known file kept, moved or deleted; some new files; some edits.
        var free = Self.allPaths
        free.shuffle(using: &random)
        var wanted: [FileID: ProjectWriter.Wanted] = [:]
        for (file, was) in known.sorted(by: { $0.key < $1.key }) where !random.chance(0.2) {
            guard let path = free.popLast() else { break }
            let text = random.chance(0.3) ? was.text + " edited" : was.text
            wanted[file] = ProjectWriter.Wanted(path: try ProjectPath(random.chance(0.5) ? path : was.path.string), text: text)
        }
        // Paths taken twice by the choice above are resolved by dropping the later file.
        var seen: Set<ProjectPath> = []
        for (file, target) in wanted.sorted(by: { $0.key < $1.key }) {
            if seen.contains(target.path) { wanted[file] = nil } else { seen.insert(target.path) }
        }
        for index in 0..<random.below(4) {
            guard let path = free.popLast(), let projectPath = try? ProjectPath(path), !seen.contains(projectPath) else { continue }
            seen.insert(projectPath)
            wanted[FileID(replica: ReplicaID(2), serial: UInt64(index))] = ProjectWriter.Wanted(path: projectPath, text: "new \(index)")
        }
        let plan = ProjectWriter.plan(wanted: wanted, known: known, open: [], disk: disk)
        #expect(plan.held.isEmpty, "seed \(seed): \(plan.held)")
        disk.perform(plan.actions)
        var expected: [String: DiskEntry] = ["a/untracked.o": .file("build output")]
        for target in wanted.values { expected[target.path.string] = .file(target.text) }
        #expect(disk.entries == expected, "seed \(seed): \(plan.actions)")
        #expect(plan.known == wanted, "seed \(seed)")
        #expect(ProjectWriter.plan(wanted: wanted, known: plan.known, open: [], disk: disk).actions.isEmpty, "seed \(seed)")
    }
}
