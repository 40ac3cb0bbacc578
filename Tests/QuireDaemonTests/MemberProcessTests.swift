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

    /// What a side's daemon is called: `user` (no git name to take instead).
    static func named(_ user: String, _ environment: [String: String]) -> [String: String] {
        environment.merging(["USER": user, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"]) { _, new in new }
    }

    /// The host's `quire members` until a line satisfies `predicate` (or `timeout`); the last output.
    static func members(in root: String, data: String, environment: [String: String], timeout: Double = 20,
                        until predicate: (String) -> Bool) throws -> String {
        var last = ""
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            let result = try run(["members", "--data-dir", data], in: root, environment: environment)
            last = result.stdout + result.stderr
            if result.status == 0, result.stdout.split(separator: "\n").contains(where: { predicate(String($0)) }) { return last }
        } while Date() < deadline
        return last
    }

    @Test func inviteAReaderGiveThemWriteRevokeThemAndTheOnceLineWorksOnce() throws {
        let root = DaemonProcess.temporaryDirectory("quire-members") + "/greeter"
        try FileManager.default.createDirectory(atPath: root + "/src", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/.quire-root", contents: Data())
        FileManager.default.createFile(atPath: root + "/src/greet.py", contents: Data("print('hi')\n".utf8))
        let (data, hostSide) = ShareJoinProcessTests.side("members-host")
        let host = Self.named("ann", hostSide)
        let share = try CommandProcess(arguments: ["share", root, "--listen", "127.0.0.1:0", "--data-dir", data], environment: host)
        _ = try #require(share.waitForLine { $0.hasPrefix("    quire join ") }, "\(share.stdout) \(share.stderr)")

        // An invitation for a reader, once: the line alone on stdout, what it allows on stderr.
        let invited = try Self.run(["invite", "--role", "read", "--once", "--expires", "1h", "--data-dir", data], in: root + "/src", environment: host)
        #expect(invited.status == 0, "\(invited.stderr)")
        let lines = invited.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty && lines[0].hasPrefix("qj1-"), "one line on stdout: \(invited.stdout.debugDescription)")
        let line = String(lines[0])
        #expect(invited.stderr.contains("as a reader") && invited.stderr.contains("It works once") && invited.stderr.contains("It expires in 1 hour"),
                "\(invited.stderr)")

        // Bob joins with it: both sides show who joined as what; the host lists him as a reader.
        let (bobData, bobSide) = ShareJoinProcessTests.side("members-bob")
        let bobEnvironment = Self.named("bob", bobSide)
        let target = DaemonProcess.temporaryDirectory("quire-members-bob") + "/copy"
        let join = try CommandProcess(arguments: ["join", line, target, "--data-dir", bobData], environment: bobEnvironment)
        #expect(join.waitForLine(timeout: 60) { $0.contains("files of \"greeter\" are in") } != nil, "\(join.stdout) \(join.stderr)")
        #expect(share.waitForLine { $0.hasSuffix("bob (127.0.0.1) joined as a reader.") || ($0.contains("bob") && $0.hasSuffix("joined as a reader.")) } != nil,
                "the host is told bob joined as a reader: \(share.stdout)")
        #expect(join.waitForLine { $0.contains("ann") && $0.hasSuffix("joined as an owner.") } != nil, "bob is told ann is an owner: \(join.stdout)")
        var listed = try Self.members(in: root, data: data, environment: host) { $0.contains(" bob ") && $0.contains(" read ") && $0.contains(" online ") }
        #expect(listed.contains(" bob ") && listed.contains(" read "), "\(listed)")
        #expect(listed.split(separator: "\n").contains { $0.contains(" ann ") && $0.contains(" owner ") && $0.hasSuffix("(you)") }, "\(listed)")

        // Bob may write now; then he is revoked: his `quire join` ends saying so, status 1.
        let role = try Self.run(["role", "bob", "write", root, "--data-dir", data], in: "/", environment: host)
        #expect(role.status == 0 && role.stdout.hasPrefix("bob (") && role.stdout.contains("is now a writer of \"greeter\""), "\(role.stdout) \(role.stderr)")
        listed = try Self.members(in: root, data: data, environment: host) { $0.contains(" bob ") && $0.contains(" write ") }
        #expect(listed.split(separator: "\n").contains { $0.contains(" bob ") && $0.contains(" write ") }, "\(listed)")
        let bobSees = try Self.members(in: target, data: bobData, environment: bobEnvironment) { $0.contains(" bob ") && $0.contains(" write ") && $0.hasSuffix("(you)") }
        #expect(bobSees.split(separator: "\n").contains { $0.contains(" bob ") && $0.contains(" write ") }, "the change reached bob's daemon: \(bobSees)")
        let notOwner = try Self.run(["revoke", "ann", "--data-dir", bobData], in: target, environment: bobEnvironment)
        #expect(notOwner.status == 1 && notOwner.stderr.contains("only an owner"), "a writer cannot revoke: \(notOwner.stderr)")
        let nobody = try Self.run(["role", "zed", "read", "--data-dir", data], in: root, environment: host)
        #expect(nobody.status == 1 && nobody.stderr.hasPrefix("quire role: no member of project greeter is named zed"), "\(nobody.stderr)")

        let revoked = try Self.run(["revoke", "bob", "--data-dir", data], in: root, environment: host)
        #expect(revoked.status == 0 && revoked.stdout.contains("was removed from \"greeter\""), "\(revoked.stdout) \(revoked.stderr)")
        #expect(join.waitForExit(timeout: 30) == 1, "bob's quire join ends with status 1: \(join.stdout) \(join.stderr)")
        #expect(join.stdout.contains("You are no longer in \"greeter\": removed from project greeter by an owner."), "\(join.stdout)")
        #expect(join.stdout.hasSuffix("Following \"greeter\" ended: you are no longer in it. Its files stay where they are; nothing new arrives.\n"))
        listed = try Self.members(in: root, data: data, environment: host) { $0.contains(" bob ") && $0.contains(" removed ") }
        #expect(listed.split(separator: "\n").contains { $0.contains(" bob ") && $0.contains(" removed ") }, "\(listed)")

        // The once line again, by another daemon: refused, and quire join says why.
        let (cyData, cySide) = ShareJoinProcessTests.side("members-cy")
        let again = try CommandProcess(arguments: ["join", line, DaemonProcess.temporaryDirectory("quire-members-cy") + "/copy", "--data-dir", cyData],
                                       environment: Self.named("cy", cySide))
        #expect(again.waitForExit(timeout: 60) == 1, "a used-up line fails: \(again.stdout) \(again.stderr)")
        #expect(again.stderr.contains("does not take this line: it was used already"), "and says so: \(again.stdout) \(again.stderr)")

        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
    }
}
