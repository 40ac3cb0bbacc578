import Foundation
import Glibc
import JSON
@testable import QuireDaemon
import QuireTestSupport
import Testing

/// An editor's `document/open` of a file whose name is not UTF-8 (`a\xff.txt`) beside a decoy
/// whose name holds U+FFFD (`a\u{FFFD}.txt`, which anyone who may write in the folder can make):
/// Vim's JSON encoder turns the byte into U+FFFD, so the daemon would open the decoy. It refuses
/// such a path (-32602, saying why) and changes nothing; raw bytes and lone surrogates never parse;
/// a `file:` URI is only a name, never decoded to another file.
@Suite struct EditorPathTests {
    /// A folder holding `a\xff.txt` ("real") and the decoy `a\u{FFFD}.txt` ("decoy").
    static func folderWithDecoy() throws -> String {
        let folder = DaemonProcess.temporaryDirectory("editor-path")
        var raw = Array((folder + "/a").utf8) + [0xFF] + Array(".txt".utf8)
        raw.append(0)
        let fd = raw.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_EXCL, 0o644) } }
        #expect(fd >= 0)
        _ = "real\n".withCString { write(fd, $0, 5) }
        close(fd)
        try "decoy\n".write(toFile: folder + "/a\u{FFFD}.txt", atomically: false, encoding: .utf8)
        return folder
    }

    static func decoyUnchanged(_ folder: String) -> Bool {
        (try? String(contentsOfFile: folder + "/a\u{FFFD}.txt", encoding: .utf8)) == "decoy\n"
    }

    @Test func aPathAsVimSendsItForABadByteIsRefusedNotOpenedAsTheDecoy() throws {
        let folder = try Self.folderWithDecoy()
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let mangled = folder + "/a\u{FFFD}.txt"   // what Vim's json_encode makes of "a\xff.txt"
        for params: JSONValue in [["uri": "doc", "text": "typed\n", "file": .string(mangled)],
                                  ["file": .string(mangled), "text": "typed\n"],
                                  ["file": .string(mangled), "ifShared": true, "text": "typed\n"]] {
            let reply = editor.request("document/open", params)
            #expect(reply["error"]?["code"] == -32602, "\(reply)")
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("params.file: ") && message.contains("holds U+FFFD"), "\(message)")
            #expect(message.contains("rename the file"), "\(message)")
        }
        #expect(daemon.document("doc") == nil, "nothing was created")
        #expect(Self.decoyUnchanged(folder))
        // A real name of plain UTF-8 opens exactly that file.
        try "plain\n".write(toFile: folder + "/plain.txt", atomically: false, encoding: .utf8)
        let plain = editor.request("document/open", ["uri": "plain", "text": "plain\n", "file": .string(folder + "/plain.txt")])
        #expect(plain["result"] != nil, "\(plain)")
        #expect(daemon.document("plain")?.file?.path == folder + "/plain.txt")
    }

    /// A file path holding NUL (`\u0000` parses: JSON strings may hold it): the system would cut
    /// the path there and open another file than the one named (`plain.txt\0.decoy` is
    /// `plain.txt`, bound under a name that is not its own, outside whatever project holds it).
    /// Refused (-32602, saying why), nothing opened or bound.
    @Test func aPathHoldingNULIsRefusedNotCutShort() throws {
        let folder = DaemonProcess.temporaryDirectory("editor-path-nul")
        try "plain\n".write(toFile: folder + "/plain.txt", atomically: false, encoding: .utf8)
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        for params: JSONValue in [["uri": "nul", "text": "typed\n", "file": .string(folder + "/plain.txt\u{0}.decoy")],
                                  ["file": .string(folder + "/plain.txt\u{0}"), "text": "typed\n"]] {
            let reply = editor.request("document/open", params)
            #expect(reply["error"]?["code"] == -32602, "\(reply)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("holds NUL") == true, "\(reply)")
        }
        #expect(daemon.document("nul") == nil && editor.request("document/list")["result"]?.arrayValue?.isEmpty == true, "nothing was opened")
        #expect(try String(contentsOfFile: folder + "/plain.txt", encoding: .utf8) == "plain\n")
    }

    /// The bytes themselves, raw or as a lone surrogate escape (`\udcff`, as some encoders write
    /// them): the message does not parse, the daemon answers a parse error and opens nothing.
    @Test func rawBytesAndLoneSurrogatesNeverReachAnOpen() throws {
        let folder = try Self.folderWithDecoy()
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let prefix = Array("{\"jsonrpc\":\"2.0\",\"id\":90,\"method\":\"document/open\",\"params\":{\"uri\":\"doc\",\"text\":\"\",\"file\":\"\(folder)/a".utf8)
        let suffix = Array(".txt\"}}".utf8)
        for middle in [[UInt8(0xFF)], Array("\\udcff".utf8)] {
            let body = prefix + middle + suffix
            editor.sendRaw(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
            let answer = editor.inbox.last { $0["error"] != nil }
            #expect(answer?["error"]?["code"] == -32700, "\(editor.inbox.suffix(2))")
        }
        #expect(daemon.document("doc") == nil)
        #expect(Self.decoyUnchanged(folder))
    }

    /// A percent-encoded `file:` URI is a document name only: it is opened under exactly that
    /// name, bound to no file, so neither `a\xff.txt` nor the decoy is read or written.
    @Test func aPercentEncodedURIIsANameNeverAnotherFile() throws {
        let folder = try Self.folderWithDecoy()
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        for uri in ["file://\(folder)/a%FF.txt", "file://\(folder)/a%EF%BF%BD.txt"] {
            let reply = editor.request("document/open", ["uri": .string(uri), "text": "typed\n"])
            #expect(reply["result"]?["uri"]?.stringValue == uri, "\(reply)")
            #expect(daemon.document(uri)?.file == nil, "bound to no file")
            let saved = editor.request("document/save", ["uri": .string(uri)])
            #expect(saved["error"] != nil, "nothing to save to: \(saved)")
        }
        #expect(Self.decoyUnchanged(folder))
    }
}
