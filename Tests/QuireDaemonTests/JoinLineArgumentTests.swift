import Foundation
import Glibc
import QuireProject
import QuireTestSupport
import Testing

/// A join line admits whoever holds it, and every user of the machine can read any process's
/// arguments (`ps`, `/proc/PID/cmdline`). `quire join LINE` hides the line from its arguments as
/// it starts, so a `quire join` left running does not show it; `quire join -` reads it from
/// standard input, so it is never there.
@Suite(.serialized) struct JoinLineArgumentTests {
    /// A well-formed line for a host that never answers (a closed port on loopback).
    static func line() throws -> String {
        try JoinLine(name: "hidden", addresses: [try PeerAddress("127.0.0.1:9")], secret: Array(repeating: 7, count: 32),
                     fingerprint: Array(repeating: 9, count: JoinLine.fingerprintBytes)).encoded
    }

    /// What `/proc/PID/cmdline` shows for `pid`, arguments joined by spaces.
    static func commandLine(_ pid: Int32) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }

    /// Waits (up to 20 s) until `pid`'s arguments no longer hold `secret`, while it runs.
    static func waitUntilHidden(_ secret: String, pid: Int32) -> String? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            guard let shown = commandLine(pid), !shown.isEmpty else { return nil }
            if !shown.contains(secret) { return shown }
            usleep(10_000)
        }
        return commandLine(pid)
    }

    @Test func aLineGivenAsAnArgumentIsHiddenFromTheProcessList() throws {
        let line = try Self.line()
        let home = DaemonProcess.temporaryDirectory("quire-join-argv")
        let join = try CommandProcess(arguments: ["join", line, home + "/files", "--data-dir", home + "/data"],
                                      environment: ["XDG_DATA_HOME": home + "/xdg", "XDG_RUNTIME_DIR": ""])
        defer { join.send(signal: SIGTERM); _ = join.waitForExit() }
        #expect(join.waitForLine(timeout: 30) { $0.contains("hidden") } != nil, "it runs: \(join.stderr)")
        let shown = Self.waitUntilHidden(line, pid: join.process.processIdentifier)
        #expect(join.process.isRunning, "\(join.stderr)")
        #expect(shown.map { !$0.contains(line) && $0.contains("join") } == true, "\(shown ?? "gone")")
    }

    @Test func aLineReadFromStandardInputIsNeverAnArgument() throws {
        let line = try Self.line()
        let home = DaemonProcess.temporaryDirectory("quire-join-stdin")
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.arguments = ["join", "-", home + "/files", "--data-dir", home + "/data"]
        process.environment = DaemonProcess.isolatedEnvironment(["XDG_DATA_HOME": home + "/xdg", "XDG_RUNTIME_DIR": ""])
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        // It joins the line it read: it says it joins "hidden" into the folder.
        var seen = ""
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !seen.contains("hidden") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        #expect(seen.contains("hidden"), "\(seen)")
        #expect(Self.commandLine(process.processIdentifier).map { !$0.contains(line) } == true)
    }
}
