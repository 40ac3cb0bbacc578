import Foundation
import JSON
import QuireProtocol

/// The built `quire` binary run as a child process, spoken to through pipes with LSP framing,
/// its replies collected by a reader thread and waited for with timeouts (never fixed sleeps).
public final class DaemonProcess: @unchecked Sendable {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let lock = NSCondition()
    private var received: [JSONValue] = []
    private var framer = MessageFramer(maximumFrameBytes: 64 << 20)
    private var ended = false

    /// The `quire` executable next to the test bundle.
    public static var binary: URL {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("quire")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return bundle.appendingPathComponent("quire")
    }

    private var errorText = ""
    /// Set when the daemon's stderr reached its end: everything it logged is in `errorText`.
    private var errorsEnded = false

    /// A fresh directory for a test's files; removed by the caller or left in the temp dir.
    public static func temporaryDirectory(_ label: String = "quire") -> String {
        let path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Each daemon gets a default data directory of its own (XDG_DATA_HOME), so tests never
    /// touch the user's documents nor each other's.
    public static func isolatedEnvironment(_ environment: [String: String]) -> [String: String] {
        var merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if environment["XDG_DATA_HOME"] == nil { merged["XDG_DATA_HOME"] = temporaryDirectory("quire-data") }
        // A crash prints Swift's backtrace on stderr, where `CrashWatch` shows it.
        if merged["SWIFT_BACKTRACE"] == nil { merged["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,color=no" }
        return merged
    }

    public init(arguments: [String] = [], environment: [String: String] = [:], directory: String? = nil) throws {
        process.executableURL = Self.binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = Self.isolatedEnvironment(environment)
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        CrashWatch.watch(process) { [weak self] in self?.log ?? "" }
        try process.run()
        let handle = output.fileHandleForReading
        Thread { [self] in
            while true {
                let data = handle.availableData
                lock.lock()
                if data.isEmpty { ended = true; lock.broadcast(); lock.unlock(); return }
                for event in framer.feed([UInt8](data)) {
                    if case .message(let body) = event, let value = try? JSONParser().parse(body) { received.append(value) }
                }
                lock.broadcast()
                lock.unlock()
            }
        }.start()
        let errorHandle = errors.fileHandleForReading
        Thread { [self] in
            while true {
                let data = errorHandle.availableData
                if data.isEmpty {
                    lock.lock()
                    errorsEnded = true
                    lock.broadcast()
                    lock.unlock()
                    return
                }
                lock.lock()
                errorText += String(decoding: data, as: UTF8.self)
                lock.broadcast()
                lock.unlock()
            }
        }.start()
    }

    public func send(_ text: String) {
        send(bytes: Array("Content-Length: \(text.utf8.count)\r\n\r\n\(text)".utf8))
    }

    /// Writing to a daemon that has exited (or a bridge whose daemon went away) must fail that
    /// write, not kill the whole test process with SIGPIPE.
    private static let pipeSignalIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Sends `bytes`; a daemon that already exited just does not get them.
    public func send(bytes: [UInt8]) {
        Self.pipeSignalIgnored
        try? input.fileHandleForWriting.write(contentsOf: Data(bytes))
    }

    public func send(_ value: JSONValue) { send(JSONSerializer().string(value)) }

    public func closeInput() { try? input.fileHandleForWriting.close() }

    /// Waits until `count` messages in all have arrived; returns them all.
    @discardableResult
    public func waitForMessages(_ count: Int, timeout: TimeInterval = 20) -> [JSONValue] {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while received.count < count && !ended && lock.wait(until: deadline) {}
        return received
    }

    /// Waits for the first message matching `predicate`.
    public func waitFor(timeout: TimeInterval = 20, _ predicate: (JSONValue) -> Bool) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let match = received.first(where: predicate) { return match }
            if ended || !lock.wait(until: deadline) { return received.first(where: predicate) }
        }
    }

    public func reply(to id: Int64, timeout: TimeInterval = 20) -> JSONValue? {
        waitFor(timeout: timeout) { $0["id"] == .integer(id) && !$0.isNotification }
    }

    /// Waits until stderr holds a line containing `needle`; returns that line.
    public func waitForLog(containing needle: String, timeout: TimeInterval = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let line = errorText.split(separator: "\n").first(where: { $0.contains(needle) }) { return String(line) }
            if !lock.wait(until: deadline) { return nil }
        }
    }

    public var log: String {
        lock.lock()
        defer { lock.unlock() }
        return errorText
    }

    /// Removes and returns every message received so far.
    public func drain() -> [JSONValue] {
        lock.lock()
        defer { lock.unlock() }
        let all = received
        received.removeAll()
        return all
    }

    public var messages: [JSONValue] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    /// Waits for the process to end; kills it after `timeout`. Returns its status.
    public func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            return nil
        }
        // The process has ended, but the reader may not have its last log lines yet: wait for the
        // end of its stderr (bounded: a child it started may still hold the pipe).
        lock.lock()
        while !errorsEnded && lock.wait(until: Swift.min(deadline, Date().addingTimeInterval(5))) {}
        lock.unlock()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
