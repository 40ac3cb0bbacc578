import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes
import QuireTestSupport

/// The LSP-style lifecycle and the errors that guard it.
@Suite struct SessionLifecycleTests {
    static func daemon() -> Daemon {
        var next: UInt64 = 0
        return Daemon(replicaSource: { next += 1; return ReplicaID(next) })
    }

    @Test func requestBeforeInitializeIsRefusedAndChangesNothing() {
        let daemon = Self.daemon()
        let editor = TestEditor(daemon: daemon)
        let reply = editor.request("document/open", ["uri": "a", "text": "x"])
        #expect(reply["error"]?["code"] == -32002)
        #expect(daemon.documents.isEmpty)
    }

    @Test func initializePicksTheFirstSupportedEncoding() {
        let editor = TestEditor(daemon: Self.daemon())
        let reply = editor.initialize(encodings: ["utf-7", "utf-8", "utf-16"])
        #expect(reply["result"]?["capabilities"]?["positionEncoding"] == "utf-8")
        #expect(reply["result"]?["protocolVersion"] == 1)
        let second = TestEditor(daemon: Self.daemon())
        #expect(second.initialize(encodings: [])["result"]?["capabilities"]?["positionEncoding"] == "utf-16")
    }

    @Test func initializeTwiceIsAnError() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.initialize()
        #expect(editor.request("initialize", [:])["error"]?["code"] == -32600)
    }

    @Test func wrongProtocolVersionIsNamed() {
        let editor = TestEditor(daemon: Self.daemon())
        let reply = editor.request("initialize", ["protocolVersion": 99])
        #expect(reply["error"]?["code"] == -32602)
        #expect(reply["error"]?["message"]?.stringValue?.contains("99") == true)
    }

    @Test func shutdownThenOnlyExit() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.initialize()
        var status: Int32?
        editor.connection.session.onExit = { status = $0 }
        #expect(editor.request("shutdown")["result"] == .null)
        #expect(editor.request("document/list")["error"]?["code"] == -32600)
        editor.notify("exit")
        #expect(status == 0)
    }

    @Test func exitWithoutShutdownIsStatusOne() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.initialize()
        var status: Int32?
        editor.connection.session.onExit = { status = $0 }
        editor.notify("exit")
        #expect(status == 1)
    }

    @Test func unknownMethodAndCancelRequest() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.initialize()
        let reply = editor.request("textDocument/hover", [:])
        #expect(reply["error"]?["code"] == -32601)
        editor.notify("$/cancelRequest", ["id": 1])
        editor.notify("no/suchNotification")
        #expect(editor.inbox.isEmpty, "notifications are never answered")
    }

    @Test func framingErrorsGetAParseErrorAndTheStreamGoesOn() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.sendRaw(Array("Content-Length: -3\r\n\r\n".utf8))
        #expect(editor.inbox.last?["error"]?["code"] == -32700)
        let reply = editor.initialize()
        #expect(reply["result"] != nil)
    }

    @Test func oversizedFrameIsRejectedAndTheDaemonKeepsServing() {
        let daemon = Daemon(configuration: Daemon.Configuration(maximumFrameBytes: 1024))
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        editor.sendRaw(String(repeating: " ", count: 5000))
        #expect(editor.inbox.last?["error"]?["message"]?.stringValue?.contains("exceeds the limit") == true)
        #expect(editor.request("document/list")["result"] == [])
    }

    @Test func batchesAreAnsweredAsArrays() {
        let editor = TestEditor(daemon: Self.daemon())
        editor.initialize()
        editor.sendRaw(#"[{"jsonrpc":"2.0","id":"a","method":"document/list"},{"jsonrpc":"2.0","method":"initialized"},{"jsonrpc":"2.0","id":"b","method":"nope"}]"#)
        let reply = editor.inbox.removeLast()
        #expect(reply.arrayValue?.count == 2)
        #expect(reply.arrayValue?[0]["id"] == "a")
        #expect(reply.arrayValue?[1]["error"]?["code"] == -32601)
    }
}

/// Limits set at start-up reach the wire.
@Suite struct ConfiguredLimitTests {
    @Test func nestingDeeperThanConfiguredIsAParseError() {
        let daemon = Daemon(configuration: Daemon.Configuration(maximumNestingDepth: 8))
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        editor.sendRaw(#"{"jsonrpc":"2.0","id":5,"method":"document/list","params":{"a":[[[[[[[[[1]]]]]]]]]}}"#)
        #expect(editor.inbox.last?["error"]?["code"] == -32700)
        editor.sendRaw(#"{"jsonrpc":"2.0","id":6,"method":"document/list","params":{"a":[[[1]]]}}"#)
        #expect(editor.inbox.last?["result"] == [])
    }

    @Test func anEditorDroppedWithoutClosingDoesNotTakeTheDaemonDown() {
        let daemon = Daemon()
        let ann = TestEditor(daemon: daemon)
        ann.initialize()
        ann.open("doc", text: "hello")
        do {
            let gone = TestEditor(daemon: daemon)
            gone.initialize()
            gone.open("doc", text: "")
        }   // its connection is released here; its session is still open on the daemon
        ann.edit(5..<5, with: " world")
        #expect(daemon.documents["doc"]?.text.string == "hello world")
        #expect(ann.request("document/text", ["uri": "doc"])["result"]?["text"] == "hello world")
    }

    @Test func severalDocumentsAtOnceStaySeparate() {
        let daemon = Daemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        editor.open("one", text: "first")
        editor.edit(5..<5, with: "!")
        let other = editor.request("document/open", ["uri": "two", "text": "second"])
        #expect(other["result"]?["created"] == true)
        editor.uri = "two"
        editor.text = Array("second".unicodeScalars)
        editor.daemonRevision = 0
        editor.edit(0..<0, with: ">")
        #expect(daemon.documents["one"]?.text.string == "first!")
        #expect(daemon.documents["two"]?.text.string == ">second")
        #expect(editor.request("document/list")["result"]?.arrayValue?.map { $0["uri"] } == ["one", "two"])
    }
}
