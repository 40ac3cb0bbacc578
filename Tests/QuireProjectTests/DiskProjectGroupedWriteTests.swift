import Foundation
import QuireProject
import Testing

/// `DiskProject.perform` writes consecutive files together (all written, then all synced, then
/// all renamed): each file still ends up whole under its name, and a failure in a group leaves
/// no temporary file and none of that group's files half-done.
@Suite struct DiskProjectGroupedWriteTests {
    /// Every file below `root`, relative, sorted.
    func listing(_ root: String) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: root).sorted()
    }

    @Test func manyWritesInFewFoldersAreAllWhole() throws {
        let folder = try TemporaryFolder()
        try folder.write("src/old.c", "int old;\n")
        let disk = DiskProject(root: folder.path)
        // More than two groups' worth, several to one folder, one replacing a file, with a
        // rename and a removal among them.
        var actions: [ProjectWriter.Action] = []
        for index in 0..<150 {
            actions.append(.write(try ProjectPath("src/m\(index % 7)/f\(index).c"), "int f\(index)(x) { return x + \(index); }\n"))
            if index == 70 { actions.append(.rename(from: try ProjectPath("src/old.c"), to: try ProjectPath("src/older.c"))) }
        }
        actions.append(.write(try ProjectPath("src/older.c"), "int older;\n"))
        try disk.perform(actions)
        for index in 0..<150 {
            let text = try String(contentsOfFile: folder.path + "/src/m\(index % 7)/f\(index).c", encoding: .utf8)
            #expect(text == "int f\(index)(x) { return x + \(index); }\n")
        }
        #expect(try String(contentsOfFile: folder.path + "/src/older.c", encoding: .utf8) == "int older;\n")
        let files = try listing(folder.path)
        #expect(!files.contains { $0.contains(".quire-write") })
        #expect(!files.contains("src/old.c"))
        #expect(files.filter { $0.hasSuffix(".c") }.count == 151)
    }

    @Test func aFailureInAGroupLeavesNoTemporaryFileAndNoneOfItsGroup() throws {
        let folder = try TemporaryFolder()
        try folder.write("blocker", "a file where a folder is needed\n")
        let disk = DiskProject(root: folder.path)
        var actions: [ProjectWriter.Action] = []
        for index in 0..<5 { actions.append(.write(try ProjectPath("a/first\(index).h"), "<A\(index)>\n")) }
        actions.append(.remove(try ProjectPath("blocker.bak")))   // absent: fails, ends the first group's run
        #expect(throws: DiskProject.Failure.self) { try disk.perform(actions) }
        // The group before a failing step stays written.
        #expect(try String(contentsOfFile: folder.path + "/a/first4.h", encoding: .utf8) == "<A4>\n")

        var failing: [ProjectWriter.Action] = []
        for index in 0..<10 { failing.append(.write(try ProjectPath("b/g\(index).h"), "\"s\(index)\"\n")) }
        failing.insert(.write(try ProjectPath("blocker/inside.h"), "f(x)\n"), at: 6)
        failing.append(.write(try ProjectPath("c/after.h"), "after\n"))
        #expect(throws: DiskProject.Failure.self) { try disk.perform(failing) }
        let files = try listing(folder.path)
        #expect(!files.contains { $0.contains(".quire-write") })
        #expect(!files.contains { $0.hasPrefix("b/g") }, "a group that failed renamed none of its files: \(files)")
        #expect(!files.contains("c/after.h"))
        #expect(try String(contentsOfFile: folder.path + "/blocker", encoding: .utf8) == "a file where a folder is needed\n")
        // Carried out again without the impossible step, every file is written.
        failing.remove(at: 6)
        try disk.perform(failing)
        #expect(try String(contentsOfFile: folder.path + "/b/g9.h", encoding: .utf8) == "\"s9\"\n")
        #expect(try String(contentsOfFile: folder.path + "/c/after.h", encoding: .utf8) == "after\n")
        #expect(!(try listing(folder.path)).contains { $0.contains(".quire-write") })
    }

    @Test func twoWritesToOneNameInAGroupLeaveTheLast() throws {
        let folder = try TemporaryFolder()
        let disk = DiskProject(root: folder.path)
        try disk.perform([.write(try ProjectPath("x.txt"), "first\n"), .write(try ProjectPath("x.txt"), "second\n")])
        #expect(try String(contentsOfFile: folder.path + "/x.txt", encoding: .utf8) == "second\n")
        #expect(try listing(folder.path) == ["x.txt"])
    }
}
