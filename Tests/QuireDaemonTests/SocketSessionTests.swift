import EditingTraces
import Foundation
import JSON
import Testing
import QuireTestSupport

/// Two real editors on one real daemon: the first on stdio, the second through
/// `quire attach` to the daemon's Unix socket.
@Suite(.serialized) struct SocketSessionTests {
    static func waitForFile(_ path: String, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(10_000) }
        return FileManager.default.fileExists(atPath: path)
    }

    @Test func secondEditorAttachesAndEditsReachTheFirst() throws {
        let path = NSTemporaryDirectory() + "quire-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let first = try DaemonProcess(arguments: ["--socket", path])
        first.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":"ann"}}}"#)
        first.send(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":"abc\n"}}"#)
        #expect(first.reply(to: 2)?["result"]?["created"] == true)
        #expect(Self.waitForFile(path), "the daemon should create its socket")

        let second = try DaemonProcess(arguments: ["attach", path])
        second.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":"bob"}}}"#)
        #expect(second.reply(to: 1)?["result"] != nil)
        second.send(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#)
        let opened = second.reply(to: 2)
        #expect(opened?["result"]?["created"] == false)
        #expect(opened?["result"]?["changes"] == [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 0]], "text": "abc\n"]])
        second.send(#"{"jsonrpc":"2.0","id":3,"method":"document/edit","params":{"uri":"doc","revision":0,"changes":[{"range":{"start":{"line":0,"character":3},"end":{"line":0,"character":3}},"text":"!"}]}}"#)
        #expect(second.reply(to: 3)?["result"]?["editorRevision"] == 1)

        let edit = first.waitFor { $0["method"] == "document/edit" }
        #expect(edit?["params"]?["changes"] == [["range": ["start": ["line": 0, "character": 3], "end": ["line": 0, "character": 3]], "text": "!"]])
        #expect(edit?["params"]?["revision"] == 0)

        first.send(#"{"jsonrpc":"2.0","id":3,"method":"shutdown"}"#)
        first.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(first.waitForExit() == 0)
        #expect(second.waitForExit() == 0, "attach ends when the daemon goes away")
    }

    /// Two real editors (stdio and `quire attach`) typing at random, reading the daemon's edits
    /// late so that edits cross: both end with the daemon's text.
    @Test(arguments: [21, 22] as [UInt64])
    func twoRealEditorsTypingAtRandomConverge(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let path = NSTemporaryDirectory() + "quire-test-\(getpid())-\(seed).sock"
        let first = try DaemonProcess(arguments: ["--socket", path])
        let a = TestEditor(process: first)
        a.initialize(user: "ann", encodings: ["utf-16"])
        a.open("doc", text: "first line\nsecond line\n")
        #expect(Self.waitForFile(path))
        let second = try DaemonProcess(arguments: ["attach", path])
        let b = TestEditor(process: second)
        b.initialize(user: "bob", encodings: ["utf-8"])
        b.open("doc", text: "")
        #expect(b.string == "first line\nsecond line\n")
        a.holdIncoming = true
        b.holdIncoming = true
        let alphabet = ConcurrentEditingTests.alphabet
        for _ in 0..<300 {
            let editor = Bool.random(using: &random) ? a : b
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let at = Int.random(in: 0...editor.text.count, using: &random)
                editor.edit(at..<at, with: alphabet.randomElement(using: &random) ?? "x", asRequest: Bool.random(using: &random))
            case 6..<8 where !editor.text.isEmpty:
                let start = Int.random(in: 0..<editor.text.count, using: &random)
                editor.edit(start..<min(editor.text.count, start + 2), with: "")
            default:
                editor.deliver(held: Int.random(in: 0...2, using: &random))
            }
        }
        // A barrier: once each editor's request is answered, everything it sent before was
        // handled, and every daemon edit caused by it was written before that reply.
        for _ in 0..<2 { for editor in [a, b] { editor.request("quire/status") } }
        a.deliver()
        b.deliver()
        let daemonText = a.request("document/text", ["uri": "doc"])["result"]?["text"]?.stringValue
        #expect(a.string == daemonText, "seed \(seed)")
        #expect(b.string == daemonText, "seed \(seed)")
        #expect(a.hashMismatches == 0 && b.hashMismatches == 0)
        #expect(a.dropped + b.dropped > 0, "edits should have crossed")
        a.request("shutdown")
        a.notify("exit")
        #expect(first.waitForExit() == 0)
        #expect(second.waitForExit() == 0)
    }
}

/// `quire attach` whose stdin closes right after its requests (`printf ... | quire attach`):
/// every byte the daemon answered reaches stdout before the bridge exits, however large.
@Suite struct AttachDrainTests {
    @Test func aLargeReplyArrivesWholeWhenStdinClosesRightAfterTheRequest() throws {
        let path = NSTemporaryDirectory() + "quire-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let daemon = try DaemonProcess(arguments: ["--socket", path])
        let line = "let <A17> = f(x) + \"s\"; // filler filler filler filler filler\n"
        let text = String(repeating: line, count: 750_000 / line.utf8.count + 1)
        let owner = TestEditor(process: daemon)
        owner.initialize(user: "ann")
        owner.open("big", text: text)
        #expect(SocketSessionTests.waitForFile(path))
        for round in 0..<3 {
            let attach = try DaemonProcess(arguments: ["attach", path])
            attach.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":"bob"}}}"#)
            attach.send(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"big","text":""}}"#)
            attach.send(#"{"jsonrpc":"2.0","id":3,"method":"document/text","params":{"uri":"big"}}"#)
            attach.closeInput()
            #expect(attach.waitForExit() == 0, "round \(round)")
            let reply = attach.reply(to: 3, timeout: 10)?["result"]?["text"]?.stringValue
            #expect(reply?.utf8.count == text.utf8.count, "round \(round): the reply arrived whole")
            #expect(reply == text)
            #expect(attach.reply(to: 2, timeout: 10)?["result"]?["changes"]?.arrayValue?.first?["text"]?.stringValue == text)
        }
        owner.request("shutdown")
        owner.notify("exit")
        #expect(daemon.waitForExit() == 0)
    }
}
