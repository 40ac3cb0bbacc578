import Foundation
import Testing

/// Fails the test run when a `quire` process a test started dies of a crash: a trap (Swift's
/// precondition, overflow or unwrap failures end in SIGILL or SIGTRAP), an abort, a bad memory
/// access. Tests end daemons with SIGTERM, SIGINT or SIGKILL, never with these, so a crash is
/// never mistaken for a test's own doing, and one that happens after a test's last check (a
/// daemon dying as its peers leave) still fails the run instead of passing unseen.
///
/// The process is watched from its termination handler, which runs on no test's task: the issue
/// is then recorded for the run as a whole ("Test «unknown»"), naming the command and the end
/// of what it wrote to stderr, which holds Swift's backtrace (`SWIFT_BACKTRACE`, see
/// `DaemonProcess.isolatedEnvironment`).
public enum CrashWatch {
    /// The signals that mean the process crashed rather than being ended.
    public static let crashSignals: Set<Int32> = [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGSYS]

    /// Records an issue (or calls `report`) if `process` ended by one of `crashSignals`; `stderr`
    /// is read only then. Set before the process runs.
    public static func watch(
        _ process: Process,
        stderr: @escaping @Sendable () -> String,
        report: @escaping @Sendable (String) -> Void = { Issue.record(Comment(rawValue: $0)) }
    ) {
        process.terminationHandler = { ended in
            guard ended.terminationReason == .uncaughtSignal, crashSignals.contains(ended.terminationStatus) else { return }
            // The reader may still be collecting a backtrace it began: give it a moment, bounded.
            let deadline = Date().addingTimeInterval(2)
            var text = stderr()
            while text.contains("*** Program crashed") && !text.contains("Backtrace took") && Date() < deadline {
                usleep(50_000)
                text = stderr()
            }
            let command = ([ended.executableURL?.lastPathComponent ?? "?"] + (ended.arguments ?? [])).joined(separator: " ")
            report("\(command) (pid \(ended.processIdentifier)) crashed with signal \(ended.terminationStatus); the end of its stderr:\n\(text.suffix(6000))")
        }
    }
}
