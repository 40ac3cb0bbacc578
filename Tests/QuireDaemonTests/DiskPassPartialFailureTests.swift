import Foundation
import Glibc
import Logging
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A disk pass whose `perform` fails part way (here: the temporary file of the file in the middle
/// is gone when it is to be renamed into place, a real `ENOENT` even for root): the files it
/// renamed into place before are on disk, so they are recorded (`known`, their bindings); the
/// rest is written by a later pass. Nothing of the pass's own writing is read back as an edit and
/// merged into its document a second time: not by the scan after the failure, not by the pass
/// that retries, not after a restart.
@Suite(.serialized) struct DiskPassPartialFailureTests {
    /// Renames seen and the temporary file taken away at the `failAt`-th one (0-based).
    final class Breaker: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var renamed: [ProjectPath] = []
        let root: String
        let failAt: Int

        init(root: String, failAt: Int) {
            self.root = root
            self.failAt = failAt
        }

        func observe(_ step: DiskProject.DurabilityStep) {
            guard case .renamed(let path) = step else { return }
            lock.lock()
            defer { lock.unlock() }
            if renamed.count == failAt {
                // Its group's writes are named after their place in the group (one group here).
                let prefix = DiskProject.passTemporaryPrefix + "\(failAt)-"
                let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
                for name in names where name.hasPrefix(prefix) { unlink(root + "/" + name) }
            }
            renamed.append(path)
        }
    }

    /// `count` files, each changed by a partner; the pass fails at the rename of the one in the
    /// middle (2 files: a pass synced file by file; 40: one synced a filesystem at a time).
    @Test(arguments: [2, 40]) func aPassThatFailsPartWayRecordsWhatItWroteAndNothingIsMergedTwice(count: Int) throws {
        let names = (0..<count).map { String(format: "f%02d.md", $0) }
        var files: [String: [UInt8]] = [:]
        for name in names { files[name] = Array("<\(name)>\n".utf8) }
        let root = try ProjectFixture.folder(files, name: "partial-pass-\(count)")
        let data = NSTemporaryDirectory() + "quire-partial-\(UUID().uuidString)"
        let expected = Dictionary(uniqueKeysWithValues: names.map { ($0, "later f(x) partner <\($0)>\n") })
        var key = ""
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, _) = ProjectFixture.daemon(49_500, store: store)
            key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
            daemon.projects.syncDisk()
            daemon.syncStorage()
            let project = try #require(daemon.projects.project(key: key))
            var documents: [String: SharedDocument] = [:]
            for (file, path) in project.view.paths { documents[path.string] = daemon.documents[project.uri(of: file)] }
            #expect(documents.count == count)
            func change(_ text: String) throws {
                for document in documents.values {
                    var scratch = document.text
                    scratch.replica = ReplicaID(9_395)
                    try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array(text.unicodeScalars)), to: document)
                }
            }
            let passes = DiskPassInFlightTests.ManualPasses()
            daemon.projects.diskPasses = passes.runner
            let breaker = Breaker(root: root, failAt: count / 2)
            daemon.projects.observePassDisk = { breaker.observe($0) }

            try change("partner ")
            daemon.projects.syncDisk()
            #expect(project.passInFlight != nil)
            daemon.projects.observePassDisk = nil   // only this pass fails
            try change("later f(x) ")
            passes.runWork()
            passes.hop()
            let done = Set(breaker.renamed.prefix(count / 2).map(\.string))
            #expect(done.count == count / 2)
            for name in names {
                #expect(ProjectFixture.read(root + "/" + name) == (done.contains(name) ? "partner <\(name)>\n" : "<\(name)>\n"), "\(name)")
            }
            #expect(!(try FileManager.default.contentsOfDirectory(atPath: root)).contains { $0.hasPrefix(".quire-write") })
            #expect(project.needsScan, "the disk is read again after a failure")

            // The next rounds: the scan, then the pass that writes the rest.
            for _ in 0..<4 {
                daemon.projects.diskRound(project, rescanDue: false)
                passes.runWork()
                passes.hop()
            }
            for name in names {
                #expect(documents[name]?.text.string == expected[name], "\(name): \(documents[name]?.text.string.debugDescription ?? "nil")")
                #expect(ProjectFixture.read(root + "/" + name) == expected[name], "\(name)")
            }
            daemon.projects.keepTree(project)
            daemon.syncStorage()
        }
        // The next start reads the folder against what was recorded.
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, _) = ProjectFixture.daemon(49_500, store: store)
        let project = try #require(daemon.projects.project(key: key))
        daemon.projects.scanDisk(project)
        for (file, path) in project.view.paths {
            let document = try #require(daemon.documents[project.uri(of: file)])
            #expect(document.text.string == expected[path.string], "\(path.string) after a restart: \(document.text.string.debugDescription)")
        }
    }
}
