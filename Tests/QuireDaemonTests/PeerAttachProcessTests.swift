import Foundation
import JSON
import QuireDaemon
import Testing
import QuireTestSupport

/// `quire peer --stdio` against a data directory a running daemon holds bridges to that
/// daemon's peer socket, so `--connect-command 'ssh host quire peer --stdio'` reaches it (issue
/// 21); against a free directory it is a daemon of its own as before. Real processes: a local
/// command stands in for ssh.
@Suite(.serialized) struct PeerAttachProcessTests {
    static let secret = PeerProcessTests.secret

    /// A daemon holding `dataDir`, with an editor that has opened `doc`; returns both once the
    /// daemon accepts peer links on its peer socket.
    static func holder(dataDir: String, user: String, text: String, arguments: [String] = []) throws -> (DaemonProcess, TestEditor) {
        let daemon = try DaemonProcess(arguments: ["--data-dir", dataDir, "--user-name", user] + arguments, environment: secret)
        let editor = TestEditor(process: daemon)
        editor.initialize(user: user)
        editor.open("doc", text: text)
        #expect(SocketSessionTests.waitForFile(EditorSocketLocation(dataDirectory: dataDir).peerSocketPath), "the holder makes its peer socket")
        return (daemon, editor)
    }

    /// The command a connecting daemon runs, as it would run `ssh host quire peer --stdio`.
    static func peerCommand(dataDir: String, extra: String = "") -> String {
        "'\(DaemonProcess.binary.path)' peer --stdio --data-dir '\(dataDir)'\(extra)"
    }

    /// The first link `editor`'s daemon reports once it is established.
    static func establishedLink(_ editor: TestEditor, timeout: TimeInterval = 20) -> JSONValue? {
        var found: JSONValue?
        _ = waitUntil(timeout: timeout) {
            found = editor.request("peer/status")["result"]?["links"]?.arrayValue?.first { $0["state"] == "established" }
            return found != nil
        }
        return found
    }

    @Test func theBridgeReachesTheRunningDaemonItsDocumentsAndItsKey() throws {
        let dataDir = DaemonProcess.temporaryDirectory("attach-held") + "/data"
        let (held, bob) = try Self.holder(dataDir: dataDir, user: "bob", text: "kept by the running daemon\n")
        let bobKey = bob.request("peer/status")["result"]?["fingerprint"]?.stringValue
        #expect(bobKey != nil)
        // No secret reaches the command (nor is one given to it): the bridge needs none.
        let ann = try DaemonProcess(arguments: ["--connect-command", Self.peerCommand(dataDir: dataDir), "--user-name", "ann", "--ephemeral"],
                                    environment: Self.secret)
        let a = TestEditor(process: ann)
        a.initialize(user: "ann")
        let link = Self.establishedLink(a)
        #expect(link?["fingerprint"]?.stringValue == bobKey, "the far end is the running daemon: its key")
        #expect(link?["user"] == "bob")
        #expect(a.waitForDocument("doc", characters: "kept by the running daemon\n".unicodeScalars.count), "its documents")
        a.open("doc", text: "")
        #expect(a.string == "kept by the running daemon\n")
        // The running daemon sees an incoming link from its peer socket, and edits flow both ways.
        let bobsLink = Self.establishedLink(bob)
        #expect(bobsLink?["address"] == "peer socket")
        a.edit(0..<0, with: "ann: ")
        #expect(waitUntil { bob.request("document/text", ["uri": "doc"])["result"]?["text"] == "ann: kept by the running daemon\n" })
        #expect(!ann.log.contains("memory only") && !ann.log.contains("in use by another quire"), "\(ann.log)")
        PeerProcessTests.shutDown([a], [ann])
        // The bridge ended with its link; the running daemon serves on.
        #expect(waitUntil { bob.request("peer/status")["result"]?["links"]?.arrayValue?.isEmpty == true })
        PeerProcessTests.shutDown([bob], [held])
    }

    @Test func anUnheldDirectoryStillGetsADaemonOfItsOwn() throws {
        let work = DaemonProcess.temporaryDirectory("attach-free")
        let dataDir = work + "/data"
        let secretFile = work + "/secret"
        #expect(FileManager.default.createFile(atPath: secretFile, contents: Data((PeerTestNetwork.secret + "\n").utf8),
                                               attributes: [.posixPermissions: 0o600]))
        let ann = try DaemonProcess(arguments: ["--connect-command", Self.peerCommand(dataDir: dataDir, extra: " --user-name carol --secret-file '\(secretFile)'"),
                                                "--user-name", "ann", "--ephemeral"], environment: Self.secret)
        let a = TestEditor(process: ann)
        a.initialize(user: "ann")
        let link = Self.establishedLink(a)
        #expect(link?["user"] == "carol")
        let farKey = link?["fingerprint"]?.stringValue
        PeerProcessTests.shutDown([a], [ann])
        // The far daemon kept its key in that directory: a daemon started on it later has it.
        #expect(waitUntil { !FileManager.default.fileExists(atPath: EditorSocketLocation(dataDirectory: dataDir).peerSocketPath) },
                "the far daemon ended and removed its peer socket")
        let later = try DaemonProcess(arguments: ["--data-dir", dataDir], environment: Self.secret)
        let l = TestEditor(process: later)
        l.initialize()
        #expect(farKey != nil && l.request("peer/status")["result"]?["fingerprint"]?.stringValue == farKey)
        PeerProcessTests.shutDown([l], [later])
    }

    @Test func withoutASecretOnlyABridgeRuns() throws {
        // Nothing holds the directory: this one would be a daemon, and refuses without a secret.
        let dataDir = DaemonProcess.temporaryDirectory("attach-nosecret") + "/data"
        // An empty QUIRE_SECRET is none, whatever the test process's environment holds.
        let lone = try DaemonProcess(arguments: ["peer", "--stdio", "--data-dir", dataDir], environment: ["QUIRE_SECRET": ""])
        #expect(lone.waitForExit() != 0)
        #expect(lone.log.contains("peering needs a shared secret"), "\(lone.log)")
        #expect(!FileManager.default.fileExists(atPath: dataDir), "refused before making anything")
    }

    @Test func thePeerSocketIsPrivateAndCutsAStranger() throws {
        let dataDir = DaemonProcess.temporaryDirectory("attach-stranger") + "/data"
        let (held, bob) = try Self.holder(dataDir: dataDir, user: "bob", text: "private\n")
        let path = EditorSocketLocation(dataDirectory: dataDir).peerSocketPath
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o777 == 0o600 && info.st_uid == getuid())
        // A client of this user that does not speak the handshake is cut off, as on TCP.
        let fd = try EditorSocketSecurityTests.connect(path)
        defer { close(fd) }
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #expect(held.waitForLog(containing: "cut off") != nil, "\(held.log)")
        #expect(PeerSecurityProcessTests.closedByDaemon(fd, timeout: 10))
        #expect(bob.request("document/text", ["uri": "doc"])["result"]?["text"] == "private\n")
        PeerProcessTests.shutDown([bob], [held])
        #expect(!FileManager.default.fileExists(atPath: path), "the peer socket goes with its daemon")
    }

    /// A data directory made by a daemon that has ended, then locked by this test, which plays
    /// a holder that has not opened its peer socket (yet). Returns the directory and the lock.
    static func lockedDirectory(_ label: String) throws -> (String, Int32) {
        let dataDir = DaemonProcess.temporaryDirectory(label) + "/data"
        let maker = try DaemonProcess(arguments: ["--data-dir", dataDir])
        maker.closeInput()
        _ = maker.waitForExit()
        let fd = open(dataDir + "/lock", O_RDWR)
        #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        return (dataDir, fd)
    }

    /// `quire peer --stdio` with raw pipes (no framing): the bridge copies bytes as they are.
    static func rawPeer(dataDir: String, logLevel: String = "warning") throws -> (Process, Pipe, Pipe, Pipe) {
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.arguments = ["peer", "--stdio", "--data-dir", dataDir, "--log-level", logLevel]
        process.environment = DaemonProcess.isolatedEnvironment(["QUIRE_SECRET": ""])
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return (process, input, output, errors)
    }

    @Test func aHolderThatTakesNoPeerLinksIsAClearError() throws {
        let (dataDir, lock) = try Self.lockedDirectory("attach-nosocket")
        defer { close(lock) }
        let (process, input, output, errors) = try Self.rawPeer(dataDir: dataDir)
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        #expect(process.terminationStatus != 0)
        #expect(log.contains("is in use by another quire, and this one cannot bridge to its peer socket"), "\(log)")
        #expect(!log.contains("Fatal error") && !log.contains("crashed"), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: EditorSocketLocation(dataDirectory: dataDir).peerSocketPath))
    }

    /// The holder opens its peer socket only after the bridge started trying: the bridge waits
    /// for it, then copies the holder's bytes to stdout and its stdin to the holder. (That the
    /// holder's very first bytes are not lost, though it speaks at once, is pinned by the test
    /// with a real daemon above: its hello is the first thing on the link.)
    @Test func theBridgeWaitsForAHolderThatIsStartingAndCopiesBothWays() throws {
        let (dataDir, lock) = try Self.lockedDirectory("attach-starting")
        defer { close(lock) }
        let (process, input, output, errors) = try Self.rawPeer(dataDir: dataDir, logLevel: "info")
        defer { if process.isRunning { process.terminate() } }
        // Wait until the bridge has found the directory held, then open the socket.
        let collected = LockedText()
        Thread {
            while true {
                let data = errors.fileHandleForReading.availableData
                if data.isEmpty { return }
                collected.append(String(decoding: data, as: UTF8.self))
            }
        }.start()
        #expect(waitUntil { collected.text.contains("joining it") }, "\(collected.text)")
        let path = EditorSocketLocation(dataDirectory: dataDir).peerSocketPath
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(listener, 4) == 0)
        defer { unlink(path) }
        var pollfd = Glibc.pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, 10_000) == 1 else {
            Issue.record("the bridge did not connect while retrying: \(collected.text)")
            return
        }
        let connection = accept(listener, nil, nil)
        #expect(connection >= 0)
        defer { close(connection) }
        let greeting = Array("hello from the holder".utf8)
        #expect(greeting.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) } == greeting.count)
        let received = LockedText()
        Thread {
            while true {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return }
                received.append(String(decoding: data, as: UTF8.self))
            }
        }.start()
        #expect(waitUntil { received.text.utf8.count >= greeting.count })
        #expect(received.text == "hello from the holder", "the holder's first bytes reach stdout")
        try input.fileHandleForWriting.write(contentsOf: Data("ping".utf8))
        try input.fileHandleForWriting.close()
        var fromBridge = [UInt8](repeating: 0, count: 64)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var got: [UInt8] = []
        while got.count < 4 {
            let n = fromBridge.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            got += fromBridge[0..<n]
        }
        #expect(got == Array("ping".utf8), "stdin reaches the holder")
    }

    /// A daemon run as another user (root only, through setpriv): root passes the socket's
    /// 0600 mode, and SO_PEERCRED refuses it before anything is read, logged with its uid.
    @Test func thePeerSocketRefusesAnotherUser() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        let work = DaemonProcess.temporaryDirectory("attach-cross")
        chmod(work, 0o755)
        let run = work + "/run"
        mkdir(run, 0o700)
        #expect(chown(run, 54321, 54321) == 0)
        let logPath = work + "/other.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        other.arguments = ["--reuid=54321", "--regid=54321", "--clear-groups", DaemonProcess.binary.path,
                           "--no-stdio", "--socket", run + "/editors.sock", "--data-dir", run + "/data", "--log-level", "info"]
        other.environment = ["HOME": run, "PATH": "/usr/bin:/bin", "QUIRE_SECRET": PeerTestNetwork.secret]
        other.standardInput = FileHandle.nullDevice
        other.standardError = log
        try other.run()
        defer { if other.isRunning { other.terminate() } }
        func logged(_ needle: String) -> Bool {
            waitUntil { ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").contains(needle) }
        }
        guard logged("accepting peer links on") else {
            Issue.record("the other user's daemon did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
            return
        }
        let fd = try EditorSocketSecurityTests.connect(run + "/data/peer.sock")
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        #expect(n == 0, "closed with nothing sent: not even the daemon's hello")
        #expect(logged("refused a peer connection from uid 0"))
        other.terminate()
    }
}

/// A daemon stopping while a `--connect` host is still being looked up.
@Suite(.serialized) struct ShutdownDuringLookupTests {
    /// The lookup answers as the event loop shuts down: its answer must not be handed to the
    /// stopped loop (SwiftNIO prints "Cannot schedule tasks on an EventLoop that has already shut
    /// down" when it is). Timing decides whether a run hits the window (about one run in three
    /// on a resolver that fails fast), so it is tried several times.
    @Test func aLookupUnderWayAtShutdownReachesNoStoppedLoop() throws {
        for _ in 0..<12 {
            let process = Process()
            process.executableURL = DaemonProcess.binary
            process.arguments = ["--ephemeral", "--connect", "nosuchhost.invalid:7070"]
            process.environment = DaemonProcess.isolatedEnvironment(PeerProcessTests.secret)
            let input = Pipe(), output = Pipe(), errors = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // End of input at once: the daemon stops while it looks the host up.
            try input.fileHandleForWriting.close()
            // To the end of stderr: everything the process wrote, up to its exit.
            let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            _ = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 1, "end of input without shutdown: status 1")
            #expect(!log.localizedCaseInsensitiveContains("cannot schedule tasks"), "\(log)")
        }
    }
}

/// Text appended by one thread and read by another.
final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var value = ""
    var text: String { lock.withLock { value } }
    func append(_ more: String) { lock.withLock { value += more } }
}
