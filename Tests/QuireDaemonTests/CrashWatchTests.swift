import Foundation
import Testing
import QuireTestSupport

/// `CrashWatch`, which every daemon and command the tests start goes through: a process that
/// dies of a crash signal is reported with its stderr, one ended the way tests end daemons is not.
@Suite struct CrashWatchTests {
    final class Reports: @unchecked Sendable {
        let lock = NSCondition()
        var texts: [String] = []
        var ended = false
    }

    /// Runs `sh -c script` under the watch; returns what it reported once the handler has run.
    func reports(ofScript script: String) throws -> [String] {
        let reports = Reports()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        CrashWatch.watch(process, stderr: { "the last words of \(script)" }) { text in
            reports.lock.lock()
            reports.texts.append(text)
            reports.lock.unlock()
        }
        let handler = process.terminationHandler
        process.terminationHandler = { ended in
            handler?(ended)
            reports.lock.lock()
            reports.ended = true
            reports.lock.broadcast()
            reports.lock.unlock()
        }
        try process.run()
        reports.lock.lock()
        defer { reports.lock.unlock() }
        let deadline = Date().addingTimeInterval(20)
        while !reports.ended && reports.lock.wait(until: deadline) {}
        #expect(reports.ended, "the watched process never ended")
        return reports.texts
    }

    @Test func aTrapOrAFaultIsReportedWithTheSignalAndStderr() throws {
        for signal in ["ILL", "TRAP", "SEGV", "BUS"] {
            let texts = try reports(ofScript: "kill -\(signal) $$")
            #expect(texts.count == 1, "SIG\(signal) was not reported")
            #expect(texts.first?.contains("crashed with signal") == true)
            #expect(texts.first?.contains("the last words of kill -\(signal)") == true)
        }
    }

    @Test func endingByTermIntKillOrExitIsNotACrash() throws {
        for script in ["kill -TERM $$", "kill -INT $$", "kill -KILL $$", "exit 3", "exit 0"] {
            #expect(try reports(ofScript: script).isEmpty, "\(script) was reported as a crash")
        }
    }
}
