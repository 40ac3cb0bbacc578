import Foundation
@testable import QuireDaemon
import QuireProject
import ReplicatingTypes
import Testing

/// A pass chained to a quick one waits until `ProjectService.chainInterval` has passed since
/// the quick one started (`chainDelay`): a burst of arriving documents (a join) is written by a
/// few passes of many files, each paying one final sync, while a lone change still reaches the
/// disk by the timer's next pass. Time here is the test's own clock, advanced by hand with the
/// scheduler's; passes are counted, not timed.
@Suite(.serialized) struct ChainedPassSpacingTests {
    /// A scheduler and a clock in the test's hands (nanoseconds).
    final class VirtualTime {
        var now: UInt64 = 1_000_000_000
        private var due: [(at: UInt64, order: Int, run: () -> Void)] = []
        private var order = 0

        func schedule(_ delay: Double, _ run: @escaping () -> Void) {
            order += 1
            due.append((now + UInt64(max(0, delay) * 1e9), order, run))
        }

        /// Moves the clock on by `milliseconds`, running what falls due on the way, in order.
        func advance(milliseconds: UInt64) {
            let end = now + milliseconds * 1_000_000
            while let next = due.filter({ $0.at <= end }).min(by: { ($0.at, $0.order) < ($1.at, $1.order) }) {
                due.removeAll { $0.order == next.order }
                now = max(now, next.at)
                next.run()
            }
            now = end
        }
    }

    private func setUp(_ base: UInt64, name: String, files: Int) throws -> (Daemon, SharedProject, [SharedDocument], String, DiskPassInFlightTests.ManualPasses, VirtualTime) {
        let (daemon, _) = ProjectFixture.daemon(base)
        var tree: [String: [UInt8]] = [:]
        for index in 0..<files { tree["f\(index).txt"] = Array("inside\n".utf8) }
        let root = try ProjectFixture.folder(tree, name: name)
        let key = try #require(ProjectFixture.share(daemon, root: root)["result"]?["key"]?.stringValue)
        daemon.projects.syncDisk()
        let project = try #require(daemon.projects.project(key: key))
        var documents: [SharedDocument] = []
        for index in 0..<files {
            let file = try #require(project.view.files[try ProjectPath("f\(index).txt")])
            documents.append(try #require(daemon.documents[project.uri(of: file)]))
        }
        let passes = DiskPassInFlightTests.ManualPasses()
        daemon.projects.diskPasses = passes.runner
        let time = VirtualTime()
        daemon.projects.passClock = { [time] in time.now }
        daemon.projects.start(schedule: { [time] delay, run in time.schedule(delay, run) })
        return (daemon, project, documents, root, passes, time)
    }

    /// A change from outside every editor (what a peer's would be).
    private func change(_ daemon: Daemon, _ document: SharedDocument, inserting text: String) throws {
        var scratch = document.text
        scratch.replica = ReplicaID(9_494)
        try daemon.router.contributeFromOutside(scratch.replace(0..<0, with: Array(text.unicodeScalars)), to: document)
    }

    /// 10 ms of the test's clock in which a pass started before it is written and recorded.
    private func step(_ time: VirtualTime, _ passes: DiskPassInFlightTests.ManualPasses) {
        passes.runWork()
        passes.hop()
        time.advance(milliseconds: 10)
    }

    /// Documents arriving one every 10 ms, each pass taking 10 ms: without spacing every pass
    /// is chained at once and writes a file or two (a pass per arrival); spaced, a pass starts
    /// at most every `chainInterval` (50 ms), so 40 arrivals make about 8 passes.
    @Test func aBurstOfArrivalsIsWrittenByFewPasses() throws {
        let (daemon, _, documents, root, passes, time) = try setUp(49_700, name: "chain-burst", files: 40)
        for (index, document) in documents.enumerated() {
            try change(daemon, document, inserting: "<A\(index)> ")
            step(time, passes)
        }
        for _ in 0..<100 { step(time, passes) }
        for index in documents.indices {
            #expect(ProjectFixture.read(root + "/f\(index).txt") == "<A\(index)> inside\n", "f\(index).txt")
        }
        #expect(passes.startedCount <= 12, "\(passes.startedCount) passes for 40 arrivals")
    }

    /// A lone change, made while no pass writes, is written by the timer's next pass (within
    /// `writeDelay`); one made while a pass writes, by the pass chained to it, within
    /// `chainInterval` of that pass's start: one pass each.
    @Test func aLoneChangeStillReachesTheDiskPromptly() throws {
        let (daemon, _, documents, root, passes, time) = try setUp(49_720, name: "chain-lone", files: 3)
        for _ in 0..<30 { step(time, passes) }   // settled: nothing to write
        let before = passes.startedCount
        try change(daemon, documents[0], inserting: "f(x) ")
        for _ in 0..<(Int(ProjectService.writeDelay * 100) + 2) { step(time, passes) }
        #expect(ProjectFixture.read(root + "/f0.txt") == "f(x) inside\n", "within one timer period")
        #expect(passes.startedCount == before + 1)

        // Another change while the next pass writes.
        try change(daemon, documents[1], inserting: "\"s\" ")
        for _ in 0..<Int(ProjectService.writeDelay * 100) where passes.started.isEmpty { time.advance(milliseconds: 10) }
        #expect(passes.started.count == 1, "the timer started a pass")
        try change(daemon, documents[2], inserting: "<B2> ")
        step(time, passes)
        #expect(ProjectFixture.read(root + "/f1.txt") == "\"s\" inside\n")
        for _ in 0..<(Int(ProjectService.chainInterval * 100) + 1) { step(time, passes) }
        #expect(ProjectFixture.read(root + "/f2.txt") == "<B2> inside\n", "by the chained pass, within chainInterval")
        #expect(passes.startedCount == before + 3)
    }
}
