import Foundation
import JSON
import QuireTestSupport
import Testing

/// `quire invite`, `quire members`, `quire role` and `quire revoke` as a person runs them next
/// to a running `quire share`, real processes on loopback (protocol/decisions/roles.md).
@Suite(.serialized) struct MemberProcessTests {
    /// A shared folder with one file and a `.quire-root`; `quire share` running on it.
    static func startShare(_ label: String) throws -> (root: String, data: String, environment: [String: String], share: CommandProcess) {
        let root = DaemonProcess.temporaryDirectory("quire-\(label)") + "/greeter"
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/.quire-root", contents: Data())
        FileManager.default.createFile(atPath: root + "/src/greet.py", contents: Data("print('hi')\n".utf8))
        let (data, environment) = ShareJoinProcessTests.side("\(label)-host")
        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--data-dir", data], environment: environment)
        _ = try #require(share.waitForLine { $0.hasPrefix("    quire join ") }, "quire share printed no line: \(share.stdout) \(share.stderr)")
        return (root, data, environment, share)
    }

    /// Runs `quire arguments` to its end in `directory`; returns status, stdout and stderr.
    static func run(_ arguments: [String], in directory: String, environment: [String: String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        let command = try CommandProcess(arguments: arguments, environment: environment, directory: directory)
        let status = command.waitForExit(timeout: 60)
        return (status, command.stdout, command.stderr)
    }

    @Test func aFolderOutsideEverySharedProjectIsRefusedNamingTheProjects() throws {
        let (root, data, environment, share) = try Self.startShare("outside")
        let elsewhere = DaemonProcess.temporaryDirectory("quire-elsewhere")
        let result = try Self.run(["members", "--data-dir", data], in: elsewhere, environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("is in no project the quire running shares or follows; it has \"greeter\" (\(root))"), "\(result.stderr)")
        let missing = try Self.run(["invite", root + "/nothing-here", "--data-dir", data], in: root, environment: environment)
        #expect(missing.status == 1 && missing.stderr.hasPrefix("quire invite: cannot use ") && missing.stderr.contains("No such file"), "\(missing.stderr)")
        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
    }
}
