import Foundation
@testable import QuireProject
import Testing

/// The order in which `DiskProject.perform` makes its writes durable: each file's data before
/// its rename, and the renames before `perform` returns; a pass of many files syncs a filesystem
/// per group (and once more at its end) instead of a file at a time, a small pass each file and
/// each folder once.
@Suite struct DiskProjectDurabilityTests {
    /// Collects the steps a `DiskProject` reports.
    final class Steps: @unchecked Sendable {
        private let lock = NSLock()
        private var steps: [DiskProject.DurabilityStep] = []
        func append(_ step: DiskProject.DurabilityStep) { lock.lock(); steps.append(step); lock.unlock() }
        var all: [DiskProject.DurabilityStep] { lock.lock(); defer { lock.unlock() }; return steps }
    }

    func disk(_ root: String, _ steps: Steps) -> DiskProject {
        var disk = DiskProject(root: root)
        disk.observeDurability = { steps.append($0) }
        return disk
    }

    @Test func aBulkPassSyncsEachGroupBeforeItsRenamesAndTheRenamesBeforeItReturns() throws {
        let folder = try TemporaryFolder()
        let steps = Steps()
        var actions: [ProjectWriter.Action] = []
        for index in 0..<150 { actions.append(.write(try ProjectPath("p\(index % 9)/q\(index % 4)/f\(index).swift"), "let f\(index) = \(index)\n")) }
        try disk(folder.path, steps).perform(actions)

        var synced: Set<ProjectPath> = [], renamed: [ProjectPath] = [], groups = 0
        for (position, step) in steps.all.enumerated() {
            switch step {
            case .dataSynced(let paths, let together):
                #expect(together, "150 writes are synced a filesystem at a time")
                #expect(paths.count <= DiskProject.writesTogether)
                synced.formUnion(paths)
                groups += 1
            case .renamed(let path):
                #expect(synced.contains(path), "\(path) renamed before its data was synced")
                renamed.append(path)
            case .folderSynced:
                Issue.record("a bulk pass syncs no folder one by one")
            case .filesystemsSynced(let count):
                #expect(position == steps.all.count - 1, "the renames' sync is the pass's last step")
                #expect(count == 1)
            }
        }
        #expect(groups == 3)
        #expect(renamed.count == 150)
        #expect(steps.all.last == .filesystemsSynced(1))
        for index in 0..<150 {
            #expect(try String(contentsOfFile: folder.path + "/p\(index % 9)/q\(index % 4)/f\(index).swift", encoding: .utf8) == "let f\(index) = \(index)\n")
        }
    }

    @Test func aSmallPassSyncsEachFileThenEachFolderOnce() throws {
        let folder = try TemporaryFolder()
        let steps = Steps()
        let paths = try ["a/one.txt", "a/two.txt", "b/three.txt", "a/four.txt"].map { try ProjectPath($0) }
        try disk(folder.path, steps).perform(paths.map { .write($0, "\($0.string)\n") })
        let all = steps.all
        #expect(all.first == .dataSynced(paths, together: false))
        #expect(Array(all[1...4]) == paths.map { .renamed($0) })
        // Folders `a` and `b`, once each, after every rename.
        let folders = all[5...].compactMap { step -> String? in
            if case .folderSynced(let path) = step { return path.ancestors.last }
            return nil
        }
        #expect(folders == ["a", "b"])
        #expect(all.count == 7)
    }

    @Test func aFailedGroupSyncsNoFolderForWhatItDidNotRename() throws {
        let folder = try TemporaryFolder()
        try folder.write("blocker", Array("a file where a folder is needed\n".utf8))
        let steps = Steps()
        var actions: [ProjectWriter.Action] = []
        for index in 0..<20 { actions.append(.write(try ProjectPath("c/g\(index).h"), "\(index)\n")) }
        actions.append(.write(try ProjectPath("blocker/inside.h"), "x\n"))
        #expect(throws: DiskProject.Failure.self) { try disk(folder.path, steps).perform(actions) }
        // The group failed before its sync: nothing was synced, renamed or left behind.
        #expect(steps.all.isEmpty, "\(steps.all)")
        #expect(!(try FileManager.default.subpathsOfDirectory(atPath: folder.path)).contains { $0.contains(".quire-write") })
    }
}
