import Foundation

/// The built `quire` binary run as a command a person types (`quire share`, `quire join`):
/// its stdout and stderr collected as text by reader threads, waited on with timeouts (never
/// fixed sleeps), signalled like a terminal's Ctrl-C.
public final class CommandProcess: @unchecked Sendable {
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    /// What the reader threads collected. They hold this, not the command, so that a test
    /// that ends early releases the command and its deinit ends the process.
    private let collected = Collected()

    private final class Collected: @unchecked Sendable {
        let lock = NSCondition()
        var outputText = ""
        var errorText = ""
        var openStreams = 2
    }

    /// Runs `quire arguments` in `directory`, with a data directory of its own (XDG_DATA_HOME)
    /// unless `environment` names one; stdin is /dev/null.
    public init(arguments: [String], environment: [String: String] = [:], directory: String? = nil) throws {
        process.executableURL = DaemonProcess.binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = DaemonProcess.isolatedEnvironment(environment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        let collected = self.collected
        CrashWatch.watch(process) {
            collected.lock.lock()
            defer { collected.lock.unlock() }
            return collected.errorText
        }
        try process.run()
        Self.collect(output.fileHandleForReading, into: collected) { $0.outputText += $1 }
        Self.collect(errors.fileHandleForReading, into: collected) { $0.errorText += $1 }
    }

    private static func collect(_ handle: FileHandle, into collected: Collected, append: @escaping (Collected, String) -> Void) {
        Thread {
            while true {
                let data = handle.availableData
                collected.lock.lock()
                if data.isEmpty {
                    collected.openStreams -= 1
                    collected.lock.broadcast()
                    collected.lock.unlock()
                    return
                }
                append(collected, String(decoding: data, as: UTF8.self))
                collected.lock.broadcast()
                collected.lock.unlock()
            }
        }.start()
    }

    /// Everything printed on stdout so far.
    public var stdout: String {
        collected.lock.lock()
        defer { collected.lock.unlock() }
        return collected.outputText
    }

    /// Everything printed on stderr so far.
    public var stderr: String {
        collected.lock.lock()
        defer { collected.lock.unlock() }
        return collected.errorText
    }

    /// Waits until a line of stdout satisfies `predicate`; returns it (nil after `timeout`, or
    /// when the process closed stdout without one).
    public func waitForLine(timeout: TimeInterval = 30, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        collected.lock.lock()
        defer { collected.lock.unlock() }
        while true {
            // Only whole lines: a line still being written is not read half.
            let complete = collected.outputText.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = complete.first(where: { predicate(String($0)) }) { return String(line) }
            if collected.openStreams == 0 || !collected.lock.wait(until: deadline) { return nil }
        }
    }

    /// Sends `signal` (SIGINT: what Ctrl-C sends).
    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end and its output to be read; kills it after `timeout`.
    /// Returns its exit status, nil when it had to be killed.
    public func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        collected.lock.lock()
        while collected.openStreams > 0 && collected.lock.wait(until: Date().addingTimeInterval(5)) {}
        collected.lock.unlock()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
