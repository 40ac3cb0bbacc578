import Foundation
import Glibc
import QuireTestSupport
import Testing

/// A crash of `quire` leaves no core file: one holds the daemon's secrets and, with a plain
/// `core_pattern`, lands in the working folder (a shared project's). The limit is set as the
/// process starts, whatever limit it inherited.
@Suite struct CoreDumpTests {
    /// `pid`'s "Max core file size" soft and hard limits as `/proc/PID/limits` shows them.
    static func coreLimits(_ pid: Int32) -> [String]? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max core file size") }) else { return nil }
        return line.dropFirst("Max core file size".count).split(separator: " ").prefix(2).map(String.init)
    }

    @Test func theDaemonRunsWithNoCoreFiles() throws {
        var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
        var inherited = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &inherited) == 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &unlimited)   // the child inherits it (root may raise it)
        defer { _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &inherited) }
        let home = DaemonProcess.temporaryDirectory("quire-core")
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.arguments = ["--data-dir", home + "/data"]
        process.environment = DaemonProcess.isolatedEnvironment(["XDG_DATA_HOME": home + "/xdg", "XDG_RUNTIME_DIR": ""])
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        var limits: [String]?
        for _ in 0..<500 where limits != ["0", "0"] {
            usleep(20_000)
            limits = Self.coreLimits(process.processIdentifier)
        }
        #expect(limits == ["0", "0"], "\(limits ?? [])")
    }
}
