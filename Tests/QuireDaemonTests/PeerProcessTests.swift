import EditingTraces
import Foundation
import JSON
import QuireDaemon
import Testing
import QuireTestSupport

/// Real `quire` daemons paired over loopback TCP and over a pipe (`--connect-command` running
/// `quire peer --stdio`), each with a real editor typing at random.
@Suite(.serialized) struct PeerProcessTests {
    static let secret = ["QUIRE_SECRET": PeerTestNetwork.secret]

    /// A daemon listening on a free loopback port; returns it and the port.
    static func listeningDaemon(user: String, secret: [String: String] = secret) throws -> (DaemonProcess, Int) {
        let daemon = try DaemonProcess(arguments: ["--listen", "127.0.0.1:0", "--user-name", user], environment: secret)
        let line = daemon.waitForLog(containing: "listening for peers on") ?? ""
        let port = Int(line.split(separator: ":").last ?? "") ?? 0
        return (daemon, port)
    }

    /// Both editors type at random while their daemons sync; at the end both show the same text.
    static func typeAtRandom(_ a: TestEditor, _ b: TestEditor, seed: UInt64, steps: Int = 200) {
        var random = SeededRandom(seed: seed)
        a.holdIncoming = true
        b.holdIncoming = true
        for _ in 0..<steps {
            let editor = Bool.random(using: &random) ? a : b
            if Int.random(in: 0..<4, using: &random) == 0 {
                editor.deliver(held: Int.random(in: 0...2, using: &random))
            } else if Int.random(in: 0..<4, using: &random) == 0, !editor.text.isEmpty {
                let start = Int.random(in: 0..<editor.text.count, using: &random)
                editor.edit(start..<min(start + 2, editor.text.count), with: "")
            } else {
                let at = Int.random(in: 0...editor.text.count, using: &random)
                editor.edit(at..<at, with: ConcurrentEditingTests.alphabet.randomElement(using: &random) ?? "x")
            }
        }
    }

    /// Waits (with a timeout) until both editors, after reading everything, show the same text.
    static func waitUntilConverged(_ a: TestEditor, _ b: TestEditor, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            for editor in [a, b] { editor.request("quire/status") }
            a.deliver()
            b.deliver()
            let textA = a.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue
            let textB = b.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue
            if textA == textB, a.string == textA, b.string == textB { return true }
            usleep(20_000)
        }
        return false
    }

    static func shutDown(_ editors: [TestEditor], _ daemons: [DaemonProcess]) {
        for editor in editors {
            editor.request("shutdown")
            editor.notify("exit")
        }
        for daemon in daemons { _ = daemon.waitForExit() }
    }

    @Test func twoDaemonsOverLoopbackTCPConverge() throws {
        let (first, port) = try Self.listeningDaemon(user: "ann")
        #expect(port > 0)
        let a = TestEditor(process: first)
        a.initialize(user: "ann")
        a.open("doc", text: "shared\ntext\n")
        let second = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "bob"], environment: Self.secret)
        let b = TestEditor(process: second)
        b.initialize(user: "bob")
        // Wait for the link, then join the document.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, b.request("peer/status")["result"]?["links"]?.arrayValue?.first?["state"] != "established" { usleep(10_000) }
        #expect(b.waitForDocument("doc", characters: "shared\ntext\n".unicodeScalars.count))
        b.open("doc", text: "")
        #expect(b.string == "shared\ntext\n")
        Self.typeAtRandom(a, b, seed: 7)
        #expect(Self.waitUntilConverged(a, b))
        Self.shutDown([a, b], [first, second])
    }

    @Test func twoDaemonsOverACommandsStdioConverge() throws {
        // The far daemon runs as `quire peer --stdio` under the first one, as over ssh, and
        // takes its own editor on a socket.
        let farSocket = NSTemporaryDirectory() + "quire-far-\(getpid()).sock"
        try? FileManager.default.removeItem(atPath: farSocket)
        // The far daemon gets the secret from its own file: a command inherits no QUIRE_SECRET.
        let secretFile = NSTemporaryDirectory() + "quire-far-secret-\(getpid())"
        #expect(FileManager.default.createFile(atPath: secretFile, contents: Data((PeerTestNetwork.secret + "\n").utf8),
                                               attributes: [.posixPermissions: 0o600]))
        defer { try? FileManager.default.removeItem(atPath: secretFile) }
        let command = "'\(DaemonProcess.binary.path)' peer --stdio --user-name carol --socket '\(farSocket)' --secret-file '\(secretFile)'"
        let first = try DaemonProcess(arguments: ["--connect-command", command, "--user-name", "ann"], environment: Self.secret)
        let a = TestEditor(process: first)
        a.initialize(user: "ann")
        a.open("doc", text: "over a pipe\n")
        #expect(SocketSessionTests.waitForFile(farSocket))
        let far = try DaemonProcess(arguments: ["attach", farSocket])
        let b = TestEditor(process: far)
        b.initialize(user: "carol")
        var links: [JSONValue] = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            links = a.request("peer/status")["result"]?["links"]?.arrayValue ?? []
            if links.first?["state"] == "established", (links.first?["operationsOut"]?.integerValue ?? 0) > 0 { break }
            usleep(10_000)
        }
        #expect(links.first?["user"] == "carol")
        #expect(b.waitForDocument("doc", characters: "over a pipe\n".unicodeScalars.count))
        b.open("doc", text: "")
        #expect(b.string == "over a pipe\n")
        Self.typeAtRandom(a, b, seed: 9)
        #expect(Self.waitUntilConverged(a, b))
        Self.shutDown([a], [first])
        #expect(far.waitForExit() == 0, "the far daemon ends with its pipe")
    }

    @Test func wrongSecretIsRefusedAndBothKeepServing() throws {
        let (first, port) = try Self.listeningDaemon(user: "ann")
        let a = TestEditor(process: first)
        a.initialize()
        a.open("doc", text: "private\n")
        let second = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)"], environment: ["QUIRE_SECRET": PeerSecret.generate()])
        let b = TestEditor(process: second)
        b.initialize()
        #expect(first.waitForLog(containing: "authentication failed") != nil)
        #expect(b.request("document/list")["result"] == [])
        #expect(a.request("document/text", ["uri": "doc"])["result"]?["text"] == "private\n")
        Self.shutDown([a, b], [first, second])
    }

    @Test func garbageOnThePeerPortIsCutOff() throws {
        let (first, port) = try Self.listeningDaemon(user: "ann")
        let a = TestEditor(process: first)
        a.initialize()
        // A client that speaks HTTP at the peer port.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(connected == 0)
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        #expect(first.waitForLog(containing: "cut off") != nil)
        close(fd)
        #expect(a.request("document/list")["result"] == [])
        Self.shutDown([a], [first])
    }
}

/// Links that editors take down and bring back, and listeners stopped under live links.
@Suite(.serialized) struct PeerLinkControlTests {
    static func waitForLink(_ editor: TestEditor, state: String, timeout: TimeInterval = 20) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let link = editor.request("peer/status")["result"]?["links"]?.arrayValue?.first, link["state"] == .string(state) { return link }
            usleep(10_000)
        }
        return nil
    }

    @Test func partitionAndHealOverTCPSendsOnlyWhatIsMissing() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let a = TestEditor(process: first)
        a.initialize()
        let big = (0..<3000).map { "line \($0) of a shared document that is long enough" }.joined(separator: "\n")
        a.open("doc", text: big)
        let second = try DaemonProcess(arguments: ["--user-name", "bob"], environment: PeerProcessTests.secret)
        let b = TestEditor(process: second)
        b.initialize()
        #expect(b.request("peer/connect", ["host": "127.0.0.1", "port": .integer(Int64(port))])["result"] == .null)
        #expect(Self.waitForLink(b, state: "established") != nil)
        #expect(b.waitForDocument("doc", characters: big.unicodeScalars.count))
        b.open("doc", text: "")
        #expect(b.string == big)
        // Cut the link, edit apart.
        let link = b.request("peer/status")["result"]?["links"]?.arrayValue?.first?["link"] ?? .null
        #expect(b.request("peer/disconnect", ["link": link])["result"] == .null)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !(b.request("peer/status")["result"]?["links"]?.arrayValue?.isEmpty ?? false) { usleep(10_000) }
        for i in 0..<30 { a.edit(i..<i, with: "A") }
        for _ in 0..<30 { b.edit(b.text.count..<b.text.count, with: "B") }
        // Heal.
        b.request("peer/connect", ["host": "127.0.0.1", "port": .integer(Int64(port))])
        let healed = Self.waitForLink(b, state: "established")
        #expect(PeerProcessTests.waitUntilConverged(a, b))
        #expect(a.string.hasPrefix(String(repeating: "A", count: 30)) && a.string.hasSuffix(String(repeating: "B", count: 30)))
        // The catch-up carried the 60 missing edits, not the 150 KB document.
        let status = b.request("peer/status")["result"]?["links"]?.arrayValue?.first
        let bytes = (status?["bytesIn"]?.integerValue ?? 0) + (status?["bytesOut"]?.integerValue ?? 0)
        #expect(healed != nil && bytes > 0 && bytes < 8_000, "healed with \(bytes) bytes")
        #expect(status?["behind"] == 0)
        PeerProcessTests.shutDown([a, b], [first, second])
    }

    @Test func stoppingTheListenerKeepsLiveLinks() throws {
        let first = try DaemonProcess(arguments: ["--user-name", "ann"], environment: PeerProcessTests.secret)
        let a = TestEditor(process: first)
        a.initialize()
        let port = a.request("peer/listen", ["port": 0])["result"]?["port"]?.integerValue ?? 0
        #expect(port > 0)
        let second = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)"], environment: PeerProcessTests.secret)
        let b = TestEditor(process: second)
        b.initialize()
        #expect(Self.waitForLink(a, state: "established") != nil)
        #expect(a.request("peer/stopListening", ["port": .integer(port)])["result"]?["stopped"] == true)
        #expect(a.request("peer/status")["result"]?["listening"] == [])
        a.open("doc", text: "still linked")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, b.request("document/list")["result"]?.arrayValue?.isEmpty ?? true { usleep(10_000) }
        #expect(b.request("document/list")["result"]?.arrayValue?.first?["uri"] == "doc")
        // A newcomer is no longer accepted.
        let third = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--log-level", "info"], environment: PeerProcessTests.secret)
        #expect(third.waitForLog(containing: "cannot connect") != nil)
        PeerProcessTests.shutDown([a, b], [first, second])
        third.process.terminate()
    }
}

/// A link this daemon initiated comes back by itself after the peer restarts.
@Suite(.serialized) struct PeerReconnectTests {
    @Test func connectingSideReconnectsAfterThePeerRestarts() throws {
        let (first, port) = try PeerProcessTests.listeningDaemon(user: "ann")
        let second = try DaemonProcess(arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "bob", "--log-level", "info"],
                                       environment: PeerProcessTests.secret)
        let b = TestEditor(process: second)
        b.initialize()
        #expect(PeerLinkControlTests.waitForLink(b, state: "established") != nil)
        first.process.terminate()
        let killed = first.waitForExit()
        #expect(killed != nil, "the first daemon should die")
        #expect(second.waitForLog(containing: "reconnecting in") != nil, "\(second.log)")
        // The same port again, with a document this time.
        let restarted = try DaemonProcess(arguments: ["--listen", "127.0.0.1:\(port)", "--user-name", "ann"], environment: PeerProcessTests.secret)
        let a = TestEditor(process: restarted)
        a.initialize()
        a.open("doc", text: "after the restart\n")
        let deadline = Date().addingTimeInterval(30)
        var documents: [JSONValue] = []
        while Date() < deadline {
            documents = b.request("document/list")["result"]?.arrayValue ?? []
            if !documents.isEmpty { break }
            usleep(20_000)
        }
        #expect(documents.first?["uri"] == "doc", "the link came back and synced")
        PeerProcessTests.shutDown([a, b], [restarted, second])
    }
}
