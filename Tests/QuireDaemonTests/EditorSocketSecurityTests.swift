import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Another user on the same machine against the editor socket: it is made 0600 (in a 0700
/// directory by default), only this user's processes are served, and `--socket PATH` never
/// removes anything at PATH but a stale socket of this user's.
@Suite(.serialized) struct EditorSocketSecurityTests {
    static func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// A socket file left at `path` by a daemon that is gone.
    static func makeStaleSocket(_ path: String) throws {
        let socket = try EditorSocket.bind(path: path)
        close(socket.descriptor)
    }

    // MARK: Mode and place

    @Test func theSocketIsMode0600WhateverTheUmask() throws {
        let work = DaemonProcess.temporaryDirectory("sock-umask")
        let path = work + "/editors.sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"umask 000; exec "$0" "$@""#, DaemonProcess.binary.path,
                             "--no-stdio", "--socket", path, "--data-dir", work + "/data"]
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        #expect(SocketSessionTests.waitForFile(path))
        #expect(Self.mode(path) == 0o600, "made under umask 000, the socket is still only its owner's")
        process.terminate()
        process.waitUntilExit()
        #expect(!Self.exists(path), "the daemon removes its own socket at exit")
    }

    /// With `$XDG_RUNTIME_DIR` set, the default socket lives in `$XDG_RUNTIME_DIR/quire` (0700),
    /// not in the data directory, and a second `quire` for the same data directory finds it and
    /// joins (which passes `SO_PEERCRED` both ways: the same user on each side).
    @Test func theDefaultSocketIsInAPrivateRuntimeDirectoryAndASecondQuireJoins() throws {
        let home = DaemonProcess.temporaryDirectory("sock-home")
        let runtime = DaemonProcess.temporaryDirectory("sock-run")
        chmod(runtime, 0o700)
        let environment = ["XDG_DATA_HOME": home, "XDG_RUNTIME_DIR": runtime]
        let first = try DaemonProcess(arguments: ["--log-level", "info"], environment: environment)
        let a = TestEditor(process: first)
        a.initialize(user: "ann")
        a.open("doc", text: "one\n")
        let line = try #require(first.waitForLog(containing: "listening for editors on"))
        let location = EditorSocketLocation(dataDirectory: home + "/quire", environment: environment)
        #expect(line.hasSuffix(location.socketPath))
        #expect(location.socketPath.hasPrefix(runtime + "/quire/editors-"))
        #expect(Self.mode(runtime + "/quire") == 0o700)
        #expect(Self.mode(location.socketPath) == 0o600)
        #expect(!Self.exists(home + "/quire/editors.sock"))

        let second = try DaemonProcess(environment: environment)
        let b = TestEditor(process: second)
        b.initialize(user: "bob")
        b.open("doc", text: "")
        #expect(b.string == "one\n", "the second quire joined the first as an editor")
        b.request("shutdown")
        b.notify("exit")
        #expect(second.waitForExit() == 0)
        a.request("shutdown")
        a.notify("exit")
        #expect(first.waitForExit() == 0)
        #expect(!Self.exists(location.socketPath))
    }

    @Test func aRuntimeDirectoryOpenToOthersIsNotUsed() throws {
        let runtime = DaemonProcess.temporaryDirectory("sock-run")
        mkdir(runtime + "/quire", 0o700)
        chmod(runtime + "/quire", 0o777)
        let location = EditorSocketLocation(dataDirectory: "/nonexistent/data", environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(throws: EditorSocketError.self) { try location.prepare() }
        do { try location.prepare() } catch { #expect("\(error)".contains("chmod 700")) }
        #expect(Self.mode(runtime + "/quire") == 0o777, "reported, not changed")
        let fallback = EditorSocketLocation(dataDirectory: "/somewhere/data", environment: [:])
        #expect(fallback.socketPath == "/somewhere/data/editors.sock")
    }

    // MARK: --socket never removes what is not its own stale socket

    enum Squatter: String, CaseIterable, Sendable {
        case folder, regularFile, symlinkToFile, danglingSymlink
    }

    @Test(arguments: Squatter.allCases)
    func somethingAtTheSocketPathIsAnErrorAndLeftAlone(_ squatter: Squatter) throws {
        let work = DaemonProcess.temporaryDirectory("sock-squat")
        let path = work + "/notes"
        let target = work + "/target.txt"
        try "keep me\n".write(toFile: target, atomically: false, encoding: .utf8)
        switch squatter {
        case .folder:
            try FileManager.default.createDirectory(atPath: path + "/inner", withIntermediateDirectories: true)
            try "content\n".write(toFile: path + "/inner/file.txt", atomically: false, encoding: .utf8)
        case .regularFile:
            try "a file\n".write(toFile: path, atomically: false, encoding: .utf8)
        case .symlinkToFile:
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
        case .danglingSymlink:
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: work + "/nothing-here")
        }
        let daemon = try DaemonProcess(arguments: ["--no-stdio", "--socket", path, "--data-dir", work + "/data"])
        #expect(daemon.waitForExit() != 0, "\(squatter): the daemon refuses to start")
        #expect(daemon.log.contains("\(path) is a"), "\(squatter): \(daemon.log)")
        #expect(daemon.log.contains("not a socket"), "\(squatter): \(daemon.log)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")
        switch squatter {
        case .folder:
            #expect(try String(contentsOfFile: path + "/inner/file.txt", encoding: .utf8) == "content\n")
        case .regularFile:
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "a file\n")
        case .symlinkToFile:
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == target)
        case .danglingSymlink:
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == work + "/nothing-here")
        }
    }

    @Test func anotherUsersSocketAtTheSocketPathIsLeftAlone() throws {
        guard getuid() == 0 else { return }   // chown to another uid needs root
        let work = DaemonProcess.temporaryDirectory("sock-other")
        let path = work + "/theirs.sock"
        try Self.makeStaleSocket(path)
        #expect(chown(path, 54321, 54321) == 0)
        let daemon = try DaemonProcess(arguments: ["--no-stdio", "--socket", path, "--data-dir", work + "/data"])
        #expect(daemon.waitForExit() != 0)
        #expect(daemon.log.contains("belongs to uid 54321"), "\(daemon.log)")
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_uid == 54321 && info.st_mode & S_IFMT == S_IFSOCK)
    }

    @Test func aStaleSocketOfOursIsReplaced() throws {
        let work = DaemonProcess.temporaryDirectory("sock-stale")
        let path = work + "/editors.sock"
        try Self.makeStaleSocket(path)
        let daemon = try DaemonProcess(arguments: ["--socket", path, "--data-dir", work + "/data", "--log-level", "info"])
        #expect(daemon.waitForLog(containing: "listening for editors on \(path)") != nil)
        let second = try DaemonProcess(arguments: ["attach", path])
        let editor = TestEditor(process: second)
        editor.initialize(user: "bob")
        second.closeInput()
        #expect(second.waitForExit() != nil)
        daemon.closeInput()
        _ = daemon.waitForExit()
        #expect(!Self.exists(path))
    }

    /// Something put at the path while the daemon ran (its socket removed and a file made in
    /// its place) is not removed at exit.
    @Test func atExitOnlyItsOwnSocketIsRemoved() throws {
        let work = DaemonProcess.temporaryDirectory("sock-exit")
        let path = work + "/editors.sock"
        let daemon = try DaemonProcess(arguments: ["--socket", path, "--data-dir", work + "/data", "--log-level", "info"])
        #expect(daemon.waitForLog(containing: "listening for editors on \(path)") != nil)
        #expect(unlink(path) == 0)
        try "someone's notes\n".write(toFile: path, atomically: false, encoding: .utf8)
        daemon.closeInput()
        _ = daemon.waitForExit()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone's notes\n")
    }

    @Test func onlyAStaleSocketOfTheUsersMayBeReplaced() {
        let me: uid_t = 1000
        #expect(EditorSocket.refusalToReplace(path: "/s", mode: S_IFSOCK | 0o600, owner: me, ownUID: me) == nil)
        #expect(EditorSocket.refusalToReplace(path: "/s", mode: S_IFSOCK | 0o600, owner: 1001, ownUID: me)?.contains("uid 1001") == true)
        for kind in [S_IFDIR, S_IFREG, S_IFLNK, S_IFIFO] {
            #expect(EditorSocket.refusalToReplace(path: "/s", mode: kind | 0o600, owner: me, ownUID: me) != nil)
        }
    }

    // MARK: SO_PEERCRED

    @Test func theKernelNamesTheConnectingUser() {
        #expect(MemoryLayout<EditorCredentials.Credentials>.size == 12, "the layout of struct ucred")
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        #expect(EditorCredentials.peerUID(ofDescriptor: fds[0]) == getuid())
    }

    @Test func onlyTheDaemonsOwnUserIsAdmitted() {
        #expect(EditorCredentials.refusal(peerUID: 1000, ownUID: 1000) == nil)
        #expect(EditorCredentials.refusal(peerUID: 1001, ownUID: 1000)?.contains("from uid 1001") == true)
        #expect(EditorCredentials.refusal(peerUID: nil, ownUID: 1000) != nil)
    }

    /// The server with the uid comparison injected: a connection from a uid other than the one
    /// it serves is logged with that uid and closed before anything is read; its own is served.
    @Test(arguments: [false, true])
    func aConnectionFromAnotherUIDIsRefusedAndLogged(fromOwnUser: Bool) throws {
        let path = DaemonProcess.temporaryDirectory("sock-cred") + "/editors.sock"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let capture = LogCapture()
        let accepted = Counter()
        let served = getuid() &+ (fromOwnUser ? 0 : 1)
        let socket = try EditorSocketServer.listen(path: path, group: group, ownUID: served, logger: capture.logger) { channel in
            accepted.increment()
            var greeting = channel.allocator.buffer(capacity: 5)
            greeting.writeString("hello")
            channel.writeAndFlush(greeting, promise: nil)
        }
        defer { socket.removeIfStillOurs() }

        let fd = try Self.connect(path)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if fromOwnUser {
            #expect(n == 5 && accepted.value == 1)
            #expect(capture.all.isEmpty)
        } else {
            #expect(n == 0, "the connection is closed, nothing sent")
            #expect(accepted.value == 0)
            #expect(capture.all.contains { $0.contains("refused an editor connection from uid \(getuid())") }, "\(capture.all)")
        }
    }

    static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw EditorSocketError("connect \(path): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// A real daemon run as another user (root only, through setpriv): it refuses this user's
    /// connection with a log naming the uid, and `quire attach` refuses to send to it.
    @Test func aDaemonOfAnotherUserAndThisUserRefuseEachOther() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        let work = DaemonProcess.temporaryDirectory("sock-cross")
        chmod(work, 0o755)
        let run = work + "/run"
        mkdir(run, 0o700)
        #expect(chown(run, 54321, 54321) == 0)
        let path = run + "/editors.sock"
        let logPath = work + "/other.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        other.arguments = ["--reuid=54321", "--regid=54321", "--clear-groups", DaemonProcess.binary.path,
                           "--no-stdio", "--socket", path, "--data-dir", run + "/data", "--log-level", "info"]
        other.environment = ["HOME": run, "PATH": "/usr/bin:/bin"]
        other.standardInput = FileHandle.nullDevice
        other.standardError = log
        try other.run()
        defer { if other.isRunning { other.terminate() } }
        let deadline = Date().addingTimeInterval(20)
        func logged(_ needle: String) -> Bool {
            while Date() < deadline {
                if let text = try? String(contentsOfFile: logPath, encoding: .utf8), text.contains(needle) { return true }
                usleep(20_000)
            }
            return false
        }
        guard logged("listening for editors on") else {
            Issue.record("the other user's daemon did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
            return
        }
        // Root passes the socket's 0600 mode; only SO_PEERCRED stands in the way.
        let attach = try DaemonProcess(arguments: ["attach", path])
        #expect(attach.waitForExit() != 0)
        #expect(attach.log.contains("runs as uid 54321"), "\(attach.log)")
        let fd = try Self.connect(path)
        var buffer = [UInt8](repeating: 0, count: 16)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(n <= 0, "no reply to another user")
        #expect(logged("refused an editor connection from uid 0"))
        other.terminate()
        other.waitUntilExit()
    }
}

/// A count shared with a channel's event loop.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
