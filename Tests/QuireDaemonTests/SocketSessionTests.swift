import Foundation
import JSON
import Testing

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
}
