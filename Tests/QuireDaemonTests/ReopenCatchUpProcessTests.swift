import QuireTestSupport
import Foundation
import JSON
import Testing
@testable import QuireDaemon

/// Real daemons: a restarted daemon answers a reopen once its configured peer caught up on the
/// document, so the reply already holds what was typed there meanwhile; with the peer away, the
/// reopen is answered after the bound, and other requests are answered meanwhile
/// (protocol/decisions/reopen-catch-up.md). Its reused replicas give no ID twice across the
/// `kill -9`s (protocol/decisions/replica-reuse.md).
@Suite(.serialized) struct ReopenCatchUpProcessTests {
    /// Waits until `editor`'s daemon lists `uri` with `characters` characters.
    static func waitUntil(_ editor: TestEditor, holds uri: String, characters: Int) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let documents = editor.request("quire/status")["result"]?["documents"]?.arrayValue ?? []
            if documents.contains(where: { $0["uri"] == .string(uri) && $0["characters"] == .integer(Int64(characters)) }) { return true }
            usleep(20_000)
        }
        return false
    }

    static func daemonA(_ data: String, port: Int, wait: Double? = nil) throws -> DaemonProcess {
        var arguments = ["--data-dir", data, "--connect", "127.0.0.1:\(port)", "--user-name", "ann", "--log-level", "info"]
        if let wait { arguments += ["--reopen-catch-up-wait", String(wait)] }
        return try DaemonProcess(arguments: arguments, environment: PeerProcessTests.secret)
    }

    static func killNine(_ daemon: DaemonProcess) {
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = daemon.waitForExit()
    }

    static func replicaPool(_ data: String) -> String {
        (try? String(contentsOfFile: data + "/replicas", encoding: .utf8)) ?? ""
    }

    @Test func aReopenAfterKillNineIsAnsweredWithWhatThePeerHas() throws {
        let data = DaemonProcess.temporaryDirectory("reopen-catch-up")
        let (b, port) = try PeerProcessTests.listeningDaemon(user: "bob")
        let a = try Self.daemonA(data, port: port)
        let ann = TestEditor(process: a)
        ann.initialize(user: "ann")
        ann.open("doc", text: "hello\n")
        ann.edit(6..<6, with: "<A1>\n")
        let bob = TestEditor(process: b)
        bob.initialize(user: "bob")
        #expect(Self.waitUntil(bob, holds: "doc", characters: 11), "B got ann's text")
        bob.open("doc", text: "")
        #expect(bob.string == "hello\n<A1>\n")
        let pool = Self.replicaPool(data)
        #expect(!pool.isEmpty)

        // A dies; bob types; A comes back while B is stopped (so its link cannot have caught up
        // before the reopen arrives); ann, who typed offline, reopens; B goes on once the
        // reopen is held.
        Self.killNine(a)
        bob.edit(0..<0, with: "<B1>\n")
        kill(b.process.processIdentifier, SIGSTOP)
        let again = try Self.daemonA(data, port: port, wait: 8)
        ann.text.append(contentsOf: Array("<A-off>\n".unicodeScalars))
        ann.connect(to: again)
        ann.initialize(user: "ann")
        let resumed = DispatchSemaphore(value: 0)
        Thread {
            _ = again.waitForLog(containing: "the reopen of doc waits")
            kill(b.process.processIdentifier, SIGCONT)
            resumed.signal()
        }.start()
        let reply = ann.reopen()
        resumed.wait()
        #expect(reply["error"] == nil, "\(reply)")
        #expect(ann.string == "<B1>\nhello\n<A1>\n<A-off>\n", "the reply already brought bob's line: \(ann.string.debugDescription)")
        #expect(again.waitForLog(containing: "the peers caught up") != nil, "\(again.log)")
        // What ann typed offline went in as a reused replica's next elements: bob gets it once.
        #expect(Self.waitUntil(bob, holds: "doc", characters: 24))
        bob.request("quire/status")
        bob.deliver()
        #expect(bob.string == ann.string)
        #expect(Self.replicaPool(data) == pool, "no new replica after the restart")

        // Now B is away too: A restarts with no peer to reach; the reopen waits for the bound,
        // and a request about something else is answered meanwhile.
        Self.killNine(again)
        Self.killNine(b)
        let alone = try Self.daemonA(data, port: port, wait: 3)
        alone.send(["jsonrpc": "2.0", "id": 9_000, "method": "initialize", "params": ["user": ["name": "ann"]]])
        #expect(alone.reply(to: 9_000) != nil)
        let started = Date()
        alone.send(["jsonrpc": "2.0", "id": 9_001, "method": "document/open", "params": [
            "uri": "doc", "text": .string(ann.string), "view": .string(ann.view ?? ""),
            "epoch": .integer(Int64(ann.epoch)), "revision": .integer(Int64(ann.daemonRevision)),
        ]])
        alone.send(["jsonrpc": "2.0", "id": 9_002, "method": "quire/status", "params": [:]])
        #expect(alone.reply(to: 9_002) != nil, "another request is not held")
        #expect(!alone.messages.contains { $0["id"] == 9_001 }, "the reopen still waits for the peer")
        let reopened = alone.reply(to: 9_001)
        #expect(reopened?["error"] == nil && reopened?["result"]?["view"] != nil, "\(String(describing: reopened))")
        #expect(Date().timeIntervalSince(started) >= 2.5, "answered after the bound")
        #expect(alone.waitForLog(containing: "no catch-up within the bound") != nil, "\(alone.log)")
    }
}
