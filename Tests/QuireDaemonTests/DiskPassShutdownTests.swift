import Foundation
import Logging
@testable import QuireDaemon
import QuireProject
import QuireTestSupport
import ReplicatingTypes
import Testing

/// The daemon stops (the editor exits) while a project's disk pass writes off the loop: the pass's
/// renames happen, but its hop back to the loop never runs (the loop is shut down), so nothing of
/// it is recorded (`known`, the file's binding). The next start must not take the pass's own file
/// for an outside change of the document and merge it in a second time.
@Suite(.serialized) struct DiskPassShutdownTests {
    /// `hopBack`: the pass is recorded before the exit (the control: what a pass on the loop did).
    @Test(arguments: [false, true]) func aPassInFlightAtShutdownIsNotMergedAgainAtTheNextStart(hopBack: Bool) throws {
        let root = try ProjectFixture.folder(["notes.md": Array("inside\n".utf8)], name: "inflight-shutdown-\(hopBack)")
        let data = NSTemporaryDirectory() + "quire-passreview-\(UUID().uuidString)"
        var key = ""
        do {
            let store = try DocumentStore(path: data, logger: Logger(label: "test"))
            let (daemon, _) = ProjectFixture.daemon(49_400, store: store)
            key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
            daemon.projects.syncDisk()
            daemon.syncStorage()
            let project = try #require(daemon.projects.project(key: key))
            let file = try #require(project.view.paths.first(where: { $0.value.string == "notes.md" })?.key)
            let document = try #require(daemon.documents[project.uri(of: file)])
            let passes = DiskPassInFlightTests.ManualPasses()
            daemon.projects.diskPasses = passes.runner
            func change(_ text: String) throws {
                var scratch = document.text
                scratch.replica = ReplicaID(9_394)
                try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array(text.unicodeScalars)), to: document)
            }
            try change("partner ")
            daemon.projects.syncDisk()
            #expect(project.passInFlight != nil)
            try change("later ")
            passes.runWork()            // the pass renames its file into place off the loop
            if hopBack { passes.hop() }
            // What DaemonServer does at exit; the hop back is never run (the loop is gone).
            daemon.finishDiskPasses()
            daemon.syncStorage()
            #expect(ProjectFixture.read(root + "/notes.md") == "partner inside\n")
            #expect(document.text.string == "later partner inside\n")
            // The process ends here: the unfinished pass (and the store it holds) goes with it.
            project.passInFlight = nil
        }
        let store = try DocumentStore(path: data, logger: Logger(label: "test"))
        let (daemon, _) = ProjectFixture.daemon(49_400, store: store)
        let project = try #require(daemon.projects.project(key: key))
        daemon.projects.scanDisk(project)
        let file = try #require(project.view.paths.first(where: { $0.value.string == "notes.md" })?.key)
        let document = try #require(daemon.documents[project.uri(of: file)])
        #expect(document.text.string == "later partner inside\n", "the pass's own write merged again: \(document.text.string.debugDescription)")
    }
}
