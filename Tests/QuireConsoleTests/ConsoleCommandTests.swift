import Foundation
import QuireConsole
import QuireProject
import QuireTestSupport
import Testing

/// `quire share` and `quire join` refuse what they cannot use at once, with the specific
/// reason, before any daemon is started (the data directory is never made).
@Suite struct ConsoleCommandTests {
    static let line = try! JoinLine(name: "greeter", addresses: [PeerAddress("127.0.0.1:9")],
                                    secret: Array(repeating: 7, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345").encoded

    /// Runs `quire arguments` in a fresh folder; returns its status, stderr, and whether it
    /// made its data directory.
    static func refusal(_ arguments: [String], in folder: String? = nil) throws -> (status: Int32?, stderr: String, madeData: Bool, seconds: Double) {
        let data = DaemonProcess.temporaryDirectory("quire-console-data") + "/data"
        let directory = folder ?? DaemonProcess.temporaryDirectory("quire-console-cwd")
        let started = Date()
        let command = try CommandProcess(arguments: arguments + ["--data-dir", data], directory: directory)
        let status = command.waitForExit(timeout: 30)
        return (status, command.stderr, FileManager.default.fileExists(atPath: data), Date().timeIntervalSince(started))
    }

    @Test(arguments: [
        ("a cut line", String(line.dropLast(9)), "the join line is cut short: it has"),
        ("a changed character", String(line.prefix(30)) + (line.dropFirst(30).first == "a" ? "b" : "a") + String(line.dropFirst(31)), "the join line is damaged: its"),
        ("a character added", line + "a", "characters too many"),
        ("a secret instead", "quire-abcdefghijklmnopqrstuvwxyz234567", "it looks like a secret from `quire secret`"),
        ("an address instead", "otherhost:7070", "it looks like an address"),
        ("a newer format", "qj2-aaaaaaaa", "made by a newer Quire"),
        ("nothing", "   ", "the join line is empty"),
    ])
    func aWrongOrCutJoinLineFailsAtOnceWithItsReason(_ label: String, text: String, message: String) throws {
        let result = try Self.refusal(["join", text])
        #expect(result.status == 1, "\(label): \(result.stderr)")
        #expect(result.stderr.hasPrefix("quire join: "), "\(label): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(label): \(result.stderr)")
        #expect(!result.madeData, "\(label): no daemon may start for a line that cannot be read")
        #expect(result.seconds < 20, "\(label): refused at once, not after a wait")
    }

    @Test func sharingWhatIsNotAFolderOrAFileOrNoProjectIsRefused() throws {
        let folder = DaemonProcess.temporaryDirectory("quire-console-share")
        FileManager.default.createFile(atPath: folder + "/file.txt", contents: Data("x\n".utf8))
        let missing = try Self.refusal(["share", folder + "/missing"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot share") && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
        // A regular file is shared by itself (OneFileProcessTests); a device is neither.
        let file = try Self.refusal(["share", "/dev/null"], in: folder)
        #expect(file.status == 1 && file.stderr.contains("/dev/null: it is not a folder or a regular file"), "\(file.stderr)")
        // No DIR, and no .git or .quire-root from the current folder up.
        let noProject = try Self.refusal(["share"], in: folder)
        #expect(noProject.status == 1 && noProject.stderr.contains("is in no project"), "\(noProject.stderr)")
        for result in [missing, file, noProject] { #expect(!result.madeData) }
    }

    @Test func joiningIntoAFileIsRefused() throws {
        let folder = DaemonProcess.temporaryDirectory("quire-console-join")
        FileManager.default.createFile(atPath: folder + "/greeter", contents: Data("x\n".utf8))
        // The default folder is named after the project: here a file has that name.
        let result = try Self.refusal(["join", Self.line], in: folder)
        #expect(result.status == 1 && result.stderr.contains("something other than a folder is there"), "\(result.stderr)")
        #expect(!result.madeData)
    }

    @Test(arguments: [
        (["share", ".", "--listen", "host name:7070"], "--listen \"host name:7070\": a host has 1 to 255 bytes"),
        (["share", ".", "--listen", "7070000"], "is not [host:]port"),
        (["share", ".", "--relay", "7070"], "--relay \"7070\" is not host:port"),
        (["share", ".", "--log-level", "loud"], "unknown log level"),
        (["join", line, "--via", "ssh\nhost"], "a command has no control characters"),
        (["join", line, "--via", "  "], "--via takes a command"),
    ])
    func badOptionsAreUsageErrors(_ arguments: [String], message: String) throws {
        let result = try Self.refusal(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        #expect(!result.madeData)
    }
}

/// The command-line values that go to the daemon, as `project/share` and `project/join` take them.
@Suite struct ConsoleArgumentsTests {
    @Test func listenAddressesDefaultToEveryInterface() throws {
        #expect(try ConsoleArguments.listenAddress("7070") == "0.0.0.0:7070")
        #expect(try ConsoleArguments.listenAddress("0") == "0.0.0.0:0")
        #expect(try ConsoleArguments.listenAddress("127.0.0.1:0") == "127.0.0.1:0")
        #expect(try ConsoleArguments.listenAddress("[::1]:7070") == "[::1]:7070")
        #expect(try ConsoleArguments.relayAddress("relay.example.org:443") == "relay.example.org:443")
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.relayAddress("relay.example.org:0") }
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.listenAddress("host:-1") }
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.listenAddress(":7070") }
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.listenAddress("h\u{1B}[2J:7070") }
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.listenAddress(String(repeating: "h", count: 300) + ":1") }
    }

    @Test func refusalsShowACleanedBoundedPartOfWhatWasTyped() {
        do {
            _ = try ConsoleArguments.listenAddress("\u{1B}]0;x\u{07}" + String(repeating: "h", count: 5000) + ":99999")
            Issue.record("must be refused")
        } catch {
            #expect(!error.description.contains("\u{1B}") && !error.description.contains("\u{07}"))
            #expect(error.description.count < 200)
        }
    }

    @Test func viaIsTheCommandAsGivenTrimmed() throws {
        #expect(try ConsoleArguments.viaCommand("ssh bob@host") == "ssh bob@host")
        #expect(try ConsoleArguments.viaCommand("  ssh -p 2222 host ") == "ssh -p 2222 host")
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.viaCommand("ssh host\rrm -rf ~") }
        #expect(throws: ConsoleArgumentError.self) { try ConsoleArguments.viaCommand(String(repeating: "s", count: 2000)) }
    }
}
