import Testing
import QuireProtocol

/// The framer as a state machine on its own: any chunking, header variants, limits, resync.
@Suite struct MessageFramerTests {
    static func frame(_ body: String, header: String = "Content-Length") -> [UInt8] {
        Array("\(header): \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    static func messages(_ events: [MessageFramer.Event]) -> [String] {
        events.compactMap { if case .message(let m) = $0 { return String(decoding: m, as: UTF8.self) } else { return nil } }
    }

    static func errors(_ events: [MessageFramer.Event]) -> [FramingError] {
        events.compactMap { if case .error(let e) = $0 { return e } else { return nil } }
    }

    @Test func byteAtATimeEqualsAllAtOnce() {
        let stream = Self.frame(#"{"a":1}"#) + Self.frame(#"{"b":"é😀"}"#) + Self.frame("[]")
        var whole = MessageFramer()
        let expected = Self.messages(whole.feed(stream))
        #expect(expected == [#"{"a":1}"#, #"{"b":"é😀"}"#, "[]"])
        var bytewise = MessageFramer()
        var got: [MessageFramer.Event] = []
        for byte in stream { got += bytewise.feed([byte]) }
        #expect(Self.messages(got) == expected)
        #expect(bytewise.finish() == nil)
    }

    @Test(arguments: [1, 2, 3, 5, 7, 13])
    func anyChunkingGivesTheSameMessages(chunk: Int) {
        let stream = Self.frame(#"{"x":[1,2,3]}"#) + Self.frame("{}", header: "content-length") + Self.frame("{}", header: "CONTENT-LENGTH")
        var framer = MessageFramer()
        var got: [MessageFramer.Event] = []
        var i = 0
        while i < stream.count { got += framer.feed(stream[i..<min(i + chunk, stream.count)]); i += chunk }
        #expect(Self.messages(got) == [#"{"x":[1,2,3]}"#, "{}", "{}"])
        #expect(framer.mode == .contentLength)
    }

    @Test func contentTypeAndExtraWhitespaceAreAccepted() {
        var framer = MessageFramer()
        let events = framer.feed(Array("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:   2  \r\n\r\n{}".utf8))
        #expect(Self.messages(events) == ["{}"])
    }

    @Test func missingContentLengthIsReportedAndTheNextFrameStillArrives() {
        var framer = MessageFramer()
        let events = framer.feed(Array("Content-Type: x\r\n\r\n{}".utf8) + Self.frame(#"{"ok":1}"#))
        #expect(Self.errors(events) == [.missingContentLength])
        #expect(Self.messages(events) == [#"{"ok":1}"#])
    }

    @Test(arguments: ["-5", "abc", "1e3", "", "99999999999999999999"])
    func invalidContentLengthIsReported(value: String) {
        var framer = MessageFramer()
        let events = framer.feed(Array("Content-Length: \(value)\r\n\r\n".utf8) + Self.frame("{}"))
        #expect(Self.errors(events) == [.invalidContentLength(value)])
        #expect(Self.messages(events) == ["{}"])
    }

    @Test func oversizedFrameIsSkippedWithoutBuffering() {
        var framer = MessageFramer(maximumFrameBytes: 100)
        var events = framer.feed(Array("Content-Length: 1000000\r\n\r\n".utf8))
        #expect(Self.errors(events) == [.frameTooLarge(size: 1_000_000, limit: 100)])
        // Feed the huge body in pieces: nothing of it is kept.
        for _ in 0..<100 {
            events = framer.feed([UInt8](repeating: UInt8(ascii: "x"), count: 10_000))
            #expect(events.isEmpty)
            #expect(framer.bufferedByteCount == 0)
        }
        #expect(Self.messages(framer.feed(Self.frame("{}"))) == ["{}"])
    }

    @Test func truncatedFrameIsReportedAtEndOfStream() {
        var framer = MessageFramer()
        #expect(framer.feed(Array("Content-Length: 10\r\n\r\n{\"a\"".utf8)).isEmpty)
        #expect(framer.finish() == .truncatedFrame(bufferedBytes: 4))
        var header = MessageFramer()
        _ = header.feed(Array("Content-Len".utf8))
        #expect(header.finish() == .truncatedFrame(bufferedBytes: 11))
    }

    @Test func headerWithoutEndIsBounded() {
        var framer = MessageFramer(maximumHeaderBytes: 64)
        let events = framer.feed([UInt8](repeating: UInt8(ascii: "a"), count: 200))
        #expect(Self.errors(events) == [.headerTooLong(limit: 64)])
        #expect(framer.bufferedByteCount < 200)
        #expect(Self.messages(framer.feed(Array("\n".utf8) + Self.frame("{}"))) == ["{}"])
    }

    @Test func malformedHeaderLineIsReported() {
        var framer = MessageFramer()
        let events = framer.feed(Array("Content-Length: 2\r\nno colon here\r\n\r\n{}".utf8) + Self.frame("[1]"))
        #expect(Self.errors(events) == [.malformedHeader("no colon here")])
        #expect(Self.messages(events) == ["[1]"])
    }

    @Test func lineModeIsChosenByTheFirstByte() {
        var framer = MessageFramer()
        let events = framer.feed(Array("  \n{\"a\":1}\r\n\n[1,2]\n{\"b\"".utf8))
        #expect(framer.mode == .lineDelimited)
        #expect(Self.messages(events) == [#"{"a":1}"#, "[1,2]"])
        #expect(Self.messages(framer.feed(Array(":2}\n".utf8))) == [#"{"b":2}"#])
        #expect(framer.finish() == nil)
    }

    @Test func overlongLineIsSkipped() {
        var framer = MessageFramer(maximumFrameBytes: 16)
        var events = framer.feed(Array(("{" + String(repeating: "x", count: 40)).utf8))
        #expect(Self.errors(events) == [.frameTooLarge(size: nil, limit: 16)])
        events = framer.feed(Array((String(repeating: "y", count: 40) + "\n{}\n").utf8))
        #expect(Self.messages(events) == ["{}"])
    }

    @Test func frameWriterFramesBothWays() {
        #expect(FrameWriter().frame(Array("{}".utf8)) == Array("Content-Length: 2\r\n\r\n{}".utf8))
        #expect(FrameWriter(lineDelimited: true).frame(Array("{}".utf8)) == Array("{}\n".utf8))
    }
}
