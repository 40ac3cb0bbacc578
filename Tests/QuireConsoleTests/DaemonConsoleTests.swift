import Foundation
import JSON
import QuireConsole
import QuireTestSupport
import Testing

/// The console's JSON-RPC client on a real daemon's editor socket, and on a fake daemon that
/// misbehaves: replies reach their requests, notifications the callback, errors and the end of
/// the connection are told at once, and nothing unbounded is read.
@Suite(.serialized) struct DaemonConsoleTests {
    /// What a console's callbacks received.
    final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var notifications: [(String, JSONValue)] = []
        private var closeReasons: [String] = []

        func notification(_ method: String, _ params: JSONValue) {
            lock.lock()
            notifications.append((method, params))
            lock.unlock()
        }

        func closed(_ reason: String) {
            lock.lock()
            closeReasons.append(reason)
            lock.unlock()
        }

        var methods: [String] {
            lock.lock()
            defer { lock.unlock() }
            return notifications.map(\.0)
        }

        func first(_ method: String) -> JSONValue? {
            lock.lock()
            defer { lock.unlock() }
            return notifications.first { $0.0 == method }?.1
        }

        var closes: [String] {
            lock.lock()
            defer { lock.unlock() }
            return closeReasons
        }
    }

    static func socketPath(_ label: String) -> String {
        NSTemporaryDirectory() + "quire-console-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
    }

    static func console(_ path: String, _ heard: Heard, within seconds: Double = 20) throws(ConsoleError) -> DaemonConsole {
        try DaemonConsole.connect(socketPath: path, within: seconds, onNotification: { heard.notification($0, $1) }, onClose: { heard.closed($0) })
    }

    @Test func requestsGetTheirRepliesAndNotificationsReachTheCallback() throws {
        let path = Self.socketPath("daemon")
        let daemon = try DaemonProcess(arguments: ["--socket", path, "--no-stdio", "--ephemeral"])
        let heardA = Heard(), heardB = Heard()
        let a = try Self.console(path, heardA)
        let b = try Self.console(path, heardB)
        let initialized = try a.request("initialize", ["user": ["name": "ann"]])
        #expect(initialized["serverInfo"]?["name"] == "quire")
        _ = try b.request("initialize", ["user": ["name": "bob"]])
        #expect(try a.request("document/open", ["uri": "notes", "text": "abc\n"])["created"] == true)
        #expect(try b.request("document/open", ["uri": "notes", "text": "abc\n"])["created"] == false)
        let status = try a.request("quire/status")
        #expect(status["sessions"] == 2)
        // B's edit reaches A as a notification.
        let edit: JSONValue = ["uri": "notes", "revision": 0,
                               "changes": [["range": ["start": ["line": 0, "character": 3], "end": ["line": 0, "character": 3]], "text": "!"]]]
        #expect(try b.request("document/edit", edit)["editorRevision"] == 1)
        #expect(waitUntil { heardA.first("document/edit") != nil })
        #expect(heardA.first("document/edit")?["changes"]?.arrayValue?.first?["text"] == "!")
        // The daemon's error comes back as the request's error, with its message.
        do {
            _ = try a.request("document/open", ["text": 3])
            Issue.record("an invalid open must be refused")
        } catch {
            #expect(error.description.hasPrefix("the daemon refused document/open: "), "\(error)")
        }
        do {
            _ = try a.request("no/such")
            Issue.record("an unknown method must be refused")
        } catch {
            #expect(error.description.contains("does not know no/such"), "\(error)")
        }
        // The daemon stops: both consoles hear it, and a request fails at once.
        daemon.process.terminate()
        #expect(waitUntil { !heardA.closes.isEmpty && !heardB.closes.isEmpty })
        #expect(heardA.closes == ["it stopped"])
        let started = Date()
        #expect(throws: ConsoleError.closed("it stopped")) { try a.request("quire/status", timeout: 20) }
        #expect(Date().timeIntervalSince(started) < 10)
        a.close()
        b.close()
    }

    @Test func nothingListeningFailsWithTheReasonAfterTheGivenTime() {
        let path = Self.socketPath("absent")
        let started = Date()
        do {
            _ = try Self.console(path, Heard(), within: 0.3)
            Issue.record("there is no daemon at \(path)")
        } catch {
            #expect(error.description.contains("cannot reach the daemon at"), "\(error)")
            #expect(error.description.contains("No such file or directory"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test(arguments: [
        ("an oversized frame", "Content-Length: 999999999\r\n\r\n{", "cannot be read"),
        ("a header with no length", "Content-Type: x\r\n\r\n{}", "cannot be read"),
        ("a body that is not JSON", "Content-Length: 5\r\n\r\nhello", "not JSON-RPC"),
        ("JSON that is not a message", "Content-Length: 2\r\n\r\n[]", "not JSON-RPC"),
        ("nesting past the bound", "Content-Length: 200\r\n\r\n\(String(repeating: "[", count: 100))\(String(repeating: "]", count: 100))", "not JSON-RPC"),
    ])
    func aDaemonThatSendsGarbageIsLeftAndThePendingRequestFails(_ label: String, answer: String, reason: String) throws {
        let path = Self.socketPath("fake")
        let fake = try FakeDaemon(path: path, answer: Array(answer.utf8))
        defer { fake.close() }
        let heard = Heard()
        let console = try Self.console(path, heard)
        defer { console.close() }
        do {
            _ = try console.request("initialize", timeout: 20)
            Issue.record("\(label): a garbage answer must fail the request")
        } catch {
            #expect(error.description.contains(reason), "\(label): \(error)")
        }
        #expect(waitUntil { heard.closes.count == 1 }, "\(label)")
        #expect(heard.closes.first?.contains(reason) == true, "\(label): \(heard.closes)")
    }
}

/// A Unix socket server that answers the first bytes it reads with `answer`, then keeps the
/// connection open: a daemon that misbehaves.
final class FakeDaemon: @unchecked Sendable {
    private let listener: Int32
    private let path: String

    init(path: String, answer: [UInt8]) throws {
        self.path = path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw ConsoleError.cannotConnect(path: path, reason: "test server: bind failed") }
        Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var chunk = [UInt8](repeating: 0, count: 4096)
            _ = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // Held open until the console goes: the console must not wait for the rest.
            while chunk.withUnsafeMutableBytes({ recv(connection, $0.baseAddress, $0.count, 0) }) > 0 {}
            Glibc.close(connection)
        }.start()
    }

    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        unlink(path)
    }
}
