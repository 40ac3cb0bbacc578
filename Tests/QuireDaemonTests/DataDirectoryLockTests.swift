import Foundation
import Logging
import QuireTestSupport
import Testing
@testable import QuireDaemon

/// The data directory's lock when this process lets a store go and opens another on the same
/// directory while it spawns children (test suites run daemons next to in-process stores): a child
/// between its fork and its exec holds a copy of the lock's descriptor, which used to refuse the
/// second store with "in use by another quire" (pid: this process's own).
@Suite struct DataDirectoryLockTests {
    @Test func aStoreOpenedAgainWhileChildrenAreSpawnedIsNotRefused() throws {
        let path = DaemonProcess.temporaryDirectory("lock")
        let spawning = SpawnLoop()
        spawning.start()
        defer { spawning.stop() }
        #expect(spawning.waitForSpawns(1), "no child was spawned")
        var refusals: [String] = []
        for _ in 0..<200 {
            do {
                let store = try DocumentStore(path: path, logger: Logger(label: "test"))
                withExtendedLifetime(store) {}
            } catch {
                refusals.append("\(error)")
            }
        }
        #expect(spawning.spawned > 1, "the children were not spawned while the stores were opened")
        #expect(refusals.isEmpty, "\(refusals.count) refusals, the first: \(refusals.first ?? "")")
    }

    @Test func aStoreThisProcessHoldsStillRefusesASecond() throws {
        let path = DaemonProcess.temporaryDirectory("lock")
        let store = try DocumentStore(path: path, logger: Logger(label: "test"))
        #expect {
            _ = try DocumentStore(path: path, logger: Logger(label: "test"))
        } throws: { error in
            (error as? StorageError)?.isLockHeld == true && "\(error)".contains("in use by another quire (pid \(getpid()))")
        }
        withExtendedLifetime(store) {}
    }
}

/// Spawns `/bin/true` over and over on a thread of its own until stopped.
private final class SpawnLoop: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopped = false
    private var count = 0
    var spawned: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }
    private var finished = false

    func start() {
        Thread { [self] in
            while true {
                condition.lock()
                let stop = stopped
                condition.unlock()
                if stop { break }
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/true")
                if (try? process.run()) != nil { process.waitUntilExit() }
                condition.lock()
                count += 1
                condition.broadcast()
                condition.unlock()
            }
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }.start()
    }

    func waitForSpawns(_ count: Int) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        condition.lock()
        defer { condition.unlock() }
        while self.count < count && condition.wait(until: deadline) {}
        return self.count >= count
    }

    func stop() {
        condition.lock()
        stopped = true
        let deadline = Date().addingTimeInterval(20)
        while !finished && condition.wait(until: deadline) {}
        condition.unlock()
    }
}
