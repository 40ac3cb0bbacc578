import Foundation
import JSON
import QuireTestSupport
import Testing

/// A file shared by itself as a person does it, real processes on loopback
/// (protocol/decisions/roles.md, *A file shared by itself*): `quire share FILE`, `quire invite
/// --role read --once FILE`, `quire join LINE` (a folder named after the file, holding it alone),
/// `quire members` (in the file's folder, or naming the file), `quire revoke`, and `quire share
/// --detach FILE` (what an editor's `:!quire share --detach %:S` runs).
@Suite(.serialized) struct OneFileProcessTests {
    @Test func shareAFileInviteAReaderJoinListAndRevoke() throws {
        let root = DaemonProcess.temporaryDirectory("quire-onefile") + "/notes"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let file = root + "/plan.md"
        FileManager.default.createFile(atPath: file, contents: Data("# plan\n- one\n".utf8))
        FileManager.default.createFile(atPath: root + "/private.txt", contents: Data("mine alone\n".utf8))
        let (data, hostSide) = ShareJoinProcessTests.side("onefile-host")
        let host = MemberProcessTests.named("ann", hostSide)
        let share = try CommandProcess(arguments: ["share", file, "--listen", "127.0.0.1:0", "--data-dir", data], environment: host)
        _ = try #require(share.waitForLine { $0.hasPrefix("    quire join ") }, "\(share.stdout) \(share.stderr)")
        #expect(share.stdout.contains("Sharing the file \(file) by itself: nothing else in its folder is shared."), "\(share.stdout)")

        // A reader's line, used once, asked by naming the file.
        let invited = try MemberProcessTests.run(["invite", "--role", "read", "--once", file, "--data-dir", data], in: "/", environment: host)
        #expect(invited.status == 0 && invited.stderr.contains("as a reader") && invited.stderr.contains("It works once"), "\(invited.stderr)")
        let line = invited.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("qj1-"), "\(invited.stdout)")

        // Bob joins with no folder named: he gets ./plan.md/, holding the file alone.
        let (bobData, bobSide) = ShareJoinProcessTests.side("onefile-bob")
        let bob = MemberProcessTests.named("bob", bobSide)
        let here = DaemonProcess.temporaryDirectory("quire-onefile-bob")
        let join = try CommandProcess(arguments: ["join", line, "--data-dir", bobData], environment: bob, directory: here)
        #expect(join.waitForLine(timeout: 60) { $0.contains("1 file of \"plan.md\" is in") } != nil, "\(join.stdout) \(join.stderr)")
        #expect(ShareJoinProcessTests.files(under: here + "/plan.md") == ["plan.md": Array("# plan\n- one\n".utf8)])
        #expect(share.waitForLine { $0.contains("bob") && $0.hasSuffix("joined as a reader.") } != nil, "\(share.stdout)")

        // `quire members` in the file's folder finds the file's project (the one shared there);
        // naming the file works from anywhere, and on bob's side from his copy.
        let listed = try MemberProcessTests.members(in: root, data: data, environment: host) { $0.contains(" bob ") && $0.contains(" read ") }
        #expect(listed.split(separator: "\n").contains { $0.contains(" bob ") && $0.contains(" read ") }, "\(listed)")
        #expect(listed.split(separator: "\n").contains { $0.contains(" ann ") && $0.contains(" owner ") && $0.hasSuffix("(you)") }, "\(listed)")
        let named = try MemberProcessTests.run(["members", file, "--data-dir", data], in: "/", environment: host)
        #expect(named.status == 0 && named.stdout.contains(" bob ") && named.stdout.contains("plan.md"), "\(named.stdout) \(named.stderr)")
        let bobSees = try MemberProcessTests.run(["members", here + "/plan.md/plan.md", "--data-dir", bobData], in: "/", environment: bob)
        #expect(bobSees.status == 0 && bobSees.stdout.split(separator: "\n").contains { $0.contains(" bob ") && $0.contains(" read ") && $0.hasSuffix("(you)") },
                "\(bobSees.stdout) \(bobSees.stderr)")
        // The folder itself is not shared: sharing it is refused, naming the file's project.
        let folderShare = try MemberProcessTests.run(["share", root, "--data-dir", data], in: "/", environment: host)
        #expect(folderShare.status == 1 && folderShare.stderr.contains("shared by itself as the project plan.md"), "\(folderShare.stderr)")

        // Revoked, bob's quire join ends saying so; his copy stays.
        let revoked = try MemberProcessTests.run(["revoke", "bob", file, "--data-dir", data], in: "/", environment: host)
        #expect(revoked.status == 0 && revoked.stdout.contains("was removed from \"plan.md\""), "\(revoked.stdout) \(revoked.stderr)")
        #expect(join.waitForExit(timeout: 30) == 1, "\(join.stdout) \(join.stderr)")
        #expect(join.stdout.contains("You are no longer in \"plan.md\""), "\(join.stdout)")
        #expect(FileManager.default.fileExists(atPath: here + "/plan.md/plan.md"))

        // `quire share --detach FILE` (what `:!quire share --detach %:S` runs in an editor): the
        // quire running shares it, the line is printed, the command returns, the file stays shared.
        let other = DaemonProcess.temporaryDirectory("quire-onefile-todo") + "/todo.md"
        FileManager.default.createFile(atPath: other, contents: Data("- todo\n".utf8))
        let detached = try MemberProcessTests.run(["share", "--detach", other, "--data-dir", data], in: "/", environment: host)
        #expect(detached.status == 0 && detached.stdout.contains("    quire join qj1-") && detached.stdout.contains("Sharing the file \(other) by itself"),
                "\(detached.stdout) \(detached.stderr)")
        let todoMembers = try MemberProcessTests.run(["members", other, "--data-dir", data], in: "/", environment: host)
        #expect(todoMembers.status == 0 && todoMembers.stdout.contains(" ann ") && todoMembers.stdout.contains("todo.md"), "still shared: \(todoMembers.stdout) \(todoMembers.stderr)")
        let (lonely, lonelySide) = ShareJoinProcessTests.side("onefile-none")
        let noQuire = try MemberProcessTests.run(["share", "--detach", other, "--data-dir", lonely], in: "/", environment: lonelySide)
        #expect(noQuire.status == 1 && noQuire.stderr.contains("no quire is running"), "\(noQuire.stderr)")

        share.send(signal: SIGINT)
        #expect(share.waitForExit() == 0, "\(share.stderr)")
    }

    /// `quire share` given a file name that is not UTF-8 (the shell passes its bytes): Swift reads
    /// each argument with U+FFFD for such bytes, which names another file (a decoy anyone may
    /// make in `/tmp`). The command refuses, naming the argument, and shares nothing.
    @Test func aFileNameThatIsNotUTF8IsRefusedNotTakenForAnother() throws {
        let folder = DaemonProcess.temporaryDirectory("quire-onefile-odd")
        FileManager.default.createFile(atPath: folder + "/caf\u{FFFD}.txt", contents: Data("the decoy\n".utf8))
        let (data, side) = ShareJoinProcessTests.side("onefile-odd")
        for extra in [["--detach"], ["--listen", "127.0.0.1:0"]] {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/sh")
            shell.arguments = ["-c", #"exec "$0" share "$(printf 'caf\351.txt')" "$@""#, DaemonProcess.binary.path, "--data-dir", data] + extra
            shell.environment = ProcessInfo.processInfo.environment.merging(side) { _, new in new }
            shell.currentDirectoryURL = URL(fileURLWithPath: folder)
            let out = Pipe(), err = Pipe()
            shell.standardOutput = out
            shell.standardError = err
            try shell.run()
            // A refusal returns at once; sharing the decoy would keep running (foreground) or say
            // no quire is running (--detach).
            #expect(waitUntil(timeout: 30) { !shell.isRunning }, "\(extra): still running, sharing something")
            if shell.isRunning { shell.interrupt() }
            shell.waitUntilExit()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(shell.terminationStatus == 1 && stderr.contains("is not UTF-8"), "\(extra): \(stderr)")
            #expect(!stdout.contains("Sharing"), "\(extra): \(stdout)")
        }
    }
}
