import Foundation
import JSON
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A project's disk pass writes off the event loop (`DiskPassRunner`) and is recorded back on it:
/// what happens on the loop while a pass writes must neither be lost nor read the pass's own
/// writes as someone else's. Each test holds the pass's work in hand (`ManualPasses`), so "while
/// it writes" is a state the test makes, not a race it hopes for.
@Suite(.serialized) struct DiskPassInFlightTests {
    /// A runner whose work and hops back to the loop wait until the test runs them.
    final class ManualPasses: @unchecked Sendable {
        private(set) var started: [@Sendable () -> Void] = []
        private var hops: [() -> Void] = []
        lazy var runner = DiskPassRunner(toLoop: { [unowned self] in hops.append($0) },
                                         start: { [unowned self] in started.append($0) },
                                         drain: { [unowned self] in runWork() })
        private(set) var startedCount = 0

        /// Runs the work started so far (the disk is written), without going back to the loop.
        func runWork() {
            let work = started
            started = []
            startedCount += work.count
            for each in work { each() }
        }

        /// Goes back to the loop: the passes whose work ran are recorded.
        func hop() {
            let pending = hops
            hops = []
            for each in pending { each() }
        }
    }

    private func setUp(_ base: UInt64, name: String) throws -> (Daemon, SharedProject, SharedDocument, String, ManualPasses) {
        let (daemon, _) = ProjectFixture.daemon(base)
        let root = try ProjectFixture.folder(["notes.md": Array("inside\n".utf8)], name: name)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        daemon.projects.syncDisk()
        let project = try #require(daemon.projects.project(key: key))
        let file = try #require(project.view.paths.first(where: { $0.value.string == "notes.md" })?.key)
        let document = try #require(daemon.documents[project.uri(of: file)])
        let passes = ManualPasses()
        daemon.projects.diskPasses = passes.runner
        return (daemon, project, document, root, passes)
    }

    /// A change from outside every editor (what a peer's would be).
    private func change(_ daemon: Daemon, _ document: SharedDocument, inserting text: String) throws {
        var scratch = document.text
        scratch.replica = ReplicaID(9_393)
        try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array(text.unicodeScalars)), to: document)
    }

    /// A change made while a pass writes the file is not taken for written when that pass is
    /// recorded (its revision is the one the pass took), and the next pass writes it; no second
    /// pass starts while one is in flight.
    @Test func aChangeMadeWhileAPassWritesIsWrittenByTheNextPass() throws {
        let (daemon, project, document, root, passes) = try setUp(49_300, name: "inflight-change")
        try change(daemon, document, inserting: "first ")
        daemon.projects.syncDisk()
        #expect(passes.started.count == 1 && project.passInFlight != nil, "the pass writes off the loop")
        #expect(ProjectFixture.read(root + "/notes.md") == "inside\n", "nothing written before its work runs")

        try change(daemon, document, inserting: "second ")
        daemon.projects.syncDisk()
        #expect(passes.started.count == 1, "no pass starts while one is in flight")

        passes.runWork()
        #expect(ProjectFixture.read(root + "/notes.md") == "first inside\n")
        #expect(project.passInFlight != nil, "recorded only back on the loop")
        passes.hop()
        #expect(project.passInFlight == nil)
        let file = try #require(project.view.files[try ProjectPath("notes.md")])
        #expect(project.known[file]?.text == "first inside\n")
        #expect(project.writtenRevisions[file] != document.revision, "the later change is not taken for written")
        // The file's binding holds what the file holds, not the document's newer text.
        #expect(document.file?.base.string == "first inside\n")

        daemon.projects.syncDisk()
        #expect(passes.startedCount + passes.started.count == 2, "the next pass takes the change")
        passes.runWork()
        passes.hop()
        #expect(ProjectFixture.read(root + "/notes.md") == "second first inside\n")
        #expect(project.writtenRevisions[file] == document.revision)
        #expect(document.text.string == "second first inside\n", "nothing read back as a change")
    }

    /// A scan asked for while a pass writes waits for that pass to be recorded: the file the pass
    /// wrote is its own, not a change from outside merged into the document a second time.
    @Test func aScanWhileAPassWritesReadsNothingOfThePassAsAChange() throws {
        let (daemon, project, document, root, passes) = try setUp(49_310, name: "inflight-scan")
        try change(daemon, document, inserting: "partner ")
        daemon.projects.syncDisk()
        #expect(project.passInFlight != nil)
        daemon.projects.scanDisk(project)
        #expect(project.passInFlight == nil, "the scan finished the pass first")
        #expect(ProjectFixture.read(root + "/notes.md") == "partner inside\n")
        #expect(document.text.string == "partner inside\n", "the pass's write is not merged in again")
        passes.hop()   // the late hop back finds the pass recorded: nothing twice
        #expect(document.text.string == "partner inside\n")
        #expect(project.passInFlight == nil)
    }

    /// Stopping a project while its pass writes records that pass first, and keeps it: what is on
    /// disk is known, so a restart does not take the written file for a change or a delete.
    @Test func aProjectStoppedWhileAPassWritesRecordsThatPassFirst() throws {
        let (daemon, project, document, root, passes) = try setUp(49_320, name: "inflight-stop")
        try change(daemon, document, inserting: "partner ")
        daemon.projects.syncDisk()
        #expect(project.passInFlight != nil)
        try daemon.projects.stop(key: project.key)
        #expect(project.passInFlight == nil)
        #expect(ProjectFixture.read(root + "/notes.md") == "partner inside\n")
        let file = try #require(project.view.files[try ProjectPath("notes.md")])
        #expect(project.known[file]?.text == "partner inside\n")
        #expect(!project.knownDirty, "kept with the record at the stop")
        passes.hop()
        #expect(project.known[file]?.text == "partner inside\n")
    }

    /// An editor's save while a pass writes the same file waits for the pass: the pass's older
    /// text is never renamed over the saved one.
    @Test func anEditorSaveWhileAPassWritesIsNotOverwrittenByIt() throws {
        let (daemon, project, document, root, passes) = try setUp(49_330, name: "inflight-save")
        try change(daemon, document, inserting: "partner ")
        daemon.projects.syncDisk()
        #expect(project.passInFlight != nil)
        try change(daemon, document, inserting: "later ")
        let saved = try #require(try daemon.projects.save(document, boundTo: root + "/notes.md"))
        #expect(saved.imported == 0, "the pass's own write is not an outside change")
        #expect(project.passInFlight == nil)
        passes.runWork()
        passes.hop()
        #expect(ProjectFixture.read(root + "/notes.md") == "later partner inside\n")
        #expect(document.text.string == "later partner inside\n")
    }
}
