import EditingTraces
import Foundation
import JSON
import Testing
import QuireTestSupport

/// The real daemon killed with SIGKILL while an editor streams edits, again and again on one
/// data directory: after every restart, every acknowledged edit is there, in order, and nothing
/// that was never sent.
@Suite(.serialized) struct CrashRecoveryTests {
    /// The utf-32 position of scalar `offset` in `text`.
    static func position(of offset: Int, in text: [Unicode.Scalar]) -> JSONValue {
        var line = 0, lineStart = 0
        for i in 0..<offset where text[i] == "\n" {
            line += 1
            lineStart = i + 1
        }
        return ["line": .integer(Int64(line)), "character": .integer(Int64(offset - lineStart))]
    }

    /// Starts a daemon on `dataDirectory`, opens "doc" and returns it with the text it recovered.
    static func startAndRead(_ dataDirectory: String, durability: String = "sync") throws -> (DaemonProcess, [Unicode.Scalar]) {
        let daemon = try DaemonProcess(arguments: ["--data-dir", dataDirectory, "--durability", durability,
                                                   "--snapshot-log-bytes", "4096", "--log-level", "info"])
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": ["capabilities": ["general": ["positionEncodings": ["utf-32"]]]]])
        daemon.send(["jsonrpc": "2.0", "method": "initialized", "params": [:]])
        daemon.send(["jsonrpc": "2.0", "id": 2, "method": "document/open", "params": ["uri": "doc", "text": ""]])
        daemon.send(["jsonrpc": "2.0", "id": 3, "method": "document/text", "params": ["uri": "doc"]])
        let text = daemon.reply(to: 3)?["result"]?["text"]?.stringValue ?? "<no reply>"
        return (daemon, Array(text.unicodeScalars))
    }

    /// Both durability modes survive SIGKILL (batch writes reach the kernel before the reply;
    /// only a power loss can take its last 200 ms). QUIRE_SOAK=N runs N rounds instead of 8.
    @Test(arguments: [(101, "sync"), (202, "batch")] as [(UInt64, String)])
    func killNineNeverLosesAnAcknowledgedEdit(seed: UInt64, durability: String) throws {
        let rounds = max(8, Int(ProcessInfo.processInfo.environment["QUIRE_SOAK"] ?? "") ?? 0)
        let dataDirectory = DaemonProcess.temporaryDirectory("crash")
        var random = SeededRandom(seed: seed)
        let alphabet: [String] = ["a", "b", "\n", "é", "😀", "hello "]
        var candidates: [[Unicode.Scalar]] = [[]]   // the texts the next start may recover
        var acknowledged = 0                         // how many of the candidates' edits were acknowledged
        for round in 0..<rounds {
            let (daemon, recovered) = try Self.startAndRead(dataDirectory, durability: durability)
            let index = candidates.firstIndex(of: recovered)
            #expect(index != nil, "seed \(seed), round \(round): recovered \(String(String.UnicodeScalarView(recovered)).debugDescription), which no prefix of the sent edits gives")
            #expect((index ?? -1) >= acknowledged, "round \(round): recovered \(index ?? -1) edits, \(acknowledged) were acknowledged")
            #expect(!daemon.log.contains("error"), "round \(round): \(daemon.log)")

            // Stream edits as requests, all written at once, then kill at a random acknowledgement.
            var text = recovered
            candidates = [text]
            var frames: [UInt8] = []
            let count = Int.random(in: 50...250, using: &random)
            for i in 0..<count {
                var change: JSONValue
                if text.count > 4 && Int.random(in: 0..<3, using: &random) == 0 {
                    let start = Int.random(in: 0..<(text.count - 2), using: &random)
                    change = ["range": ["start": Self.position(of: start, in: text), "end": Self.position(of: start + 2, in: text)], "text": ""]
                    text.removeSubrange(start..<(start + 2))
                } else {
                    let at = Int.random(in: 0...text.count, using: &random)
                    let insert = alphabet.randomElement(using: &random) ?? "a"
                    change = ["range": ["start": Self.position(of: at, in: text), "end": Self.position(of: at, in: text)], "text": .string(insert)]
                    text.insert(contentsOf: insert.unicodeScalars, at: at)
                }
                candidates.append(text)
                let body = JSONSerializer().string(["jsonrpc": "2.0", "id": .integer(Int64(100 + i)), "method": "document/edit",
                                                    "params": ["uri": "doc", "epoch": 0, "revision": 0, "changes": [change]]])
                frames += Array("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
            }
            daemon.send(bytes: frames)
            let killAfter = Int.random(in: 0...count, using: &random)
            if killAfter > 0 { _ = daemon.reply(to: Int64(100 + killAfter - 1)) }
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
            _ = daemon.waitForMessages(Int.max, timeout: 2)
            // Everything the daemon wrote before dying counts as acknowledged.
            acknowledged = daemon.messages.compactMap { $0["id"]?.integerValue }.filter { $0 >= 100 }.map { Int($0) - 99 }.max() ?? 0
            #expect(acknowledged >= killAfter)
        }
    }

    /// A project opened in one write (many `document/open`s with text in one read, so their
    /// creation shares one commit), the daemon killed at a random acknowledgement: after the
    /// restart every document whose open was acknowledged is there with its text.
    @Test(arguments: [(303, "sync"), (404, "batch")] as [(UInt64, String)])
    func documentsCreatedTogetherSurviveKillNine(seed: UInt64, durability: String) throws {
        let dataDirectory = DaemonProcess.temporaryDirectory("crash")
        var random = SeededRandom(seed: seed)
        var acknowledged: [String: String] = [:]   // uri: text
        for round in 0...3 {
            let daemon = try DaemonProcess(arguments: ["--data-dir", dataDirectory, "--durability", durability, "--log-level", "info"])
            daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": [:]])
            // What the last round acknowledged is there, whole.
            var id: Int64 = 10
            for (uri, text) in acknowledged.sorted(by: { $0.key < $1.key }) {
                daemon.send(["jsonrpc": "2.0", "id": .integer(id + 1), "method": "document/open", "params": ["uri": .string(uri)]])
                id += 2
                daemon.send(["jsonrpc": "2.0", "id": .integer(id), "method": "document/text", "params": ["uri": .string(uri)]])
                let kept = daemon.reply(to: id)?["result"]?["text"]?.stringValue
                #expect(kept == text, "round \(round): \(uri) came back as \(kept.debugDescription)")
            }
            #expect(!daemon.log.contains("error"), "round \(round): \(daemon.log)")
            guard round < 3 else { break }
            // Open a batch of new documents in one write; kill after a random one's reply.
            let count = Int.random(in: 20...120, using: &random)
            var frames: [UInt8] = []
            var opened: [(id: Int64, uri: String, text: String)] = []
            for i in 0..<count {
                let uri = "round\(round)/file\(i).swift"
                let text = "func f\(i)() -> Int {\n    return \(Int.random(in: 0...1_000_000, using: &random))\n}\n"
                let body = JSONSerializer().string(["jsonrpc": "2.0", "id": .integer(Int64(1_000 + i)), "method": "document/open",
                                                    "params": ["uri": .string(uri), "text": .string(text)]])
                frames += Array("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
                opened.append((Int64(1_000 + i), uri, text))
            }
            daemon.send(bytes: frames)
            let killAfter = Int.random(in: 0..<count, using: &random)
            _ = daemon.reply(to: Int64(1_000 + killAfter))
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
            _ = daemon.waitForMessages(Int.max, timeout: 2)
            let replied = Set(daemon.messages.compactMap { $0["id"]?.integerValue })
            #expect(replied.contains(Int64(1_000 + killAfter)))
            for document in opened where replied.contains(document.id) { acknowledged[document.uri] = document.text }
        }
    }
}

/// One daemon per data directory. A second `quire` for the default directory becomes an editor
/// of the daemon that holds it (through its `editors.sock`), so both share documents and their
/// persistence; one that cannot bridge keeps documents in memory; a directory named with
/// --data-dir that is in use is an error.
@Suite(.serialized) struct DataDirectoryLockTests {
    @Test func aSecondQuireJoinsTheDaemonThatHoldsTheDirectory() throws {
        let home = DaemonProcess.temporaryDirectory("xdg")
        let first = try DaemonProcess(arguments: ["--log-level", "info"], environment: ["XDG_DATA_HOME": home])
        let a = TestEditor(process: first)
        a.initialize(user: "ann")
        #expect(a.request("quire/status")["result"]?["storage"]?["dataDir"]?.stringValue == home + "/quire")
        #expect(a.request("quire/status")["result"]?["storage"]?["durability"] == "sync")
        a.open("doc", text: "from ann\n")

        let second = try DaemonProcess(environment: ["XDG_DATA_HOME": home])
        let b = TestEditor(process: second)
        b.initialize(user: "bob")
        let status = b.request("quire/status")["result"]
        #expect(status?["sessions"] == 2, "bob is the first daemon's second editor")
        #expect(status?["storage"]?["dataDir"]?.stringValue == home + "/quire")
        b.open("doc", text: "")
        #expect(b.string == "from ann\n")
        b.edit(0..<0, with: "bob: ")
        let deadline = Date().addingTimeInterval(10)
        while a.string != "bob: from ann\n" && Date() < deadline {
            a.request("quire/status")   // a round trip, so that the daemon's edit has arrived
            a.deliver()
        }
        #expect(a.string == "bob: from ann\n")

        // Input from a file cannot be bridged: that one keeps its documents in memory.
        let input = DaemonProcess.temporaryDirectory("input") + "/in.jsonl"
        try (#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"quire/status"}"# + "\n")
            .write(toFile: input, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.environment = DaemonProcess.isolatedEnvironment(["XDG_DATA_HOME": home])
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let replies = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("keeps its documents in memory only"), "\(log)")
        #expect(replies.contains(#""storage":null"#), "\(replies)")

        let third = try DaemonProcess(arguments: ["--data-dir", home + "/quire"])
        #expect(third.waitForExit() != 0)
        #expect(third.log.contains("is in use by another quire (pid \(first.process.processIdentifier))"), "\(third.log)")
        // Bob first: his quire bridges to ann's daemon, which ends with her.
        PeerProcessTests.shutDown([b, a], [second, first])
    }
}
