import Foundation
import JSON
import Testing

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
        var random = SeededGenerator(seed: seed)
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
}

/// One daemon per data directory: a second one says so, and either keeps its documents in
/// memory (the default directory) or refuses to start (a directory it was told to use).
@Suite(.serialized) struct DataDirectoryLockTests {
    @Test func aSecondDaemonOnTheSameDirectoryIsToldWhy() throws {
        let home = DaemonProcess.temporaryDirectory("xdg")
        let first = try DaemonProcess(arguments: ["--log-level", "info"], environment: ["XDG_DATA_HOME": home])
        let a = TestEditor(process: first)
        a.initialize()
        #expect(a.request("quire/status")["result"]?["storage"]?["dataDir"]?.stringValue == home + "/quire")
        #expect(a.request("quire/status")["result"]?["storage"]?["durability"] == "sync")

        let second = try DaemonProcess(environment: ["XDG_DATA_HOME": home])
        #expect(second.waitForLog(containing: "is in use by another quire (pid \(first.process.processIdentifier))") != nil, "\(second.log)")
        let b = TestEditor(process: second)
        b.initialize()
        #expect(b.request("quire/status")["result"]?["storage"] == .null, "the second keeps documents in memory")
        b.open("doc", text: "still served\n")
        #expect(b.request("document/text", ["uri": "doc"])["result"]?["text"] == "still served\n")

        let third = try DaemonProcess(arguments: ["--data-dir", home + "/quire"])
        #expect(third.waitForExit() != 0)
        #expect(third.log.contains("is in use by another quire"), "\(third.log)")
        PeerProcessTests.shutDown([a, b], [first, second])
    }
}
