import JSON
import QuireProtocol
import Testing

/// What a hostile or clumsy editor sends that the typed messages must refuse by name: negative
/// epochs and revisions, fractional or huge numbers, and method names made to forge log lines.
@Suite struct HostileParamsTests {
    static let uri: JSONValue = "a"

    @Test func negativeEpochsAndRevisionsAreInvalidParamsNotStaleEpochs() throws {
        let edit = #expect(throws: ResponseError.self) {
            try EditDocumentMessage(params: ["uri": Self.uri, "epoch": -5, "revision": 0, "changes": []])
        }
        #expect(edit?.code == ResponseError.invalidParamsCode && edit?.message == "Invalid params: params.epoch: must not be negative, got -5")
        let cursor = #expect(throws: ResponseError.self) {
            try CursorMessage(params: ["uri": Self.uri, "epoch": -1, "revision": 0, "selections": []])
        }
        #expect(cursor?.message == "Invalid params: params.epoch: must not be negative, got -1")
        let resync = #expect(throws: ResponseError.self) {
            try ResyncDocumentRequest(params: ["uri": Self.uri, "text": "x", "epoch": 0, "revision": -2])
        }
        #expect(resync?.message == "Invalid params: params.revision: must not be negative, got -2")
        #expect(throws: ResponseError.self) { try ResyncDocumentRequest(params: ["uri": Self.uri, "text": "x", "epoch": -1, "revision": 0]) }
        // Absent still means epoch 0 for edits and cursors.
        #expect(try EditDocumentMessage(params: ["uri": Self.uri, "revision": 0, "changes": []]).epoch == 0)
    }

    @Test func aFractionalOrHugeNumberIsNamedWithItsValue() throws {
        let half = #expect(throws: ResponseError.self) { try DisconnectRequest(params: ["link": .double(0.5)]) }
        #expect(half?.message == "Invalid params: params.link: expected an integer, got 0.5")
        let huge = #expect(throws: ResponseError.self) { try StopListeningRequest(params: ["port": .double(1e300)]) }
        #expect(huge?.message == "Invalid params: params.port: expected an integer, got 1e+300")
        #expect(try DisconnectRequest(params: ["link": .double(3)]).link == 3)
    }

    @Test func methodNamesAreShownSafely() {
        #expect(ResponseError.methodNotFound("textDocument/hover").message == "Method not found: textDocument/hover")
        #expect(ResponseError.methodNotFound("héllo/wörld").message == "Method not found: héllo/wörld")
        // A newline would forge a log line and an escape would drive the terminal reading stderr.
        let forged = ResponseError.methodNotFound("x\u{1B}[31m\nwarning quire: fake").message
        #expect(!forged.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{7F}" })
        #expect(forged == #"Method not found: "x\u{1B}[31m\nwarning quire: fake""#)
        let long = ResponseError.methodNotFound(String(repeating: "m", count: 10_000)).message
        #expect(long.count < 200)
        #expect(ResponseError.shownMethod("a\u{202E}b") == #""a\u{202E}b""#)
    }

    /// A host goes into logs, `peer/changed` and `peer/status`: bounded, and no control
    /// characters that could forge a log line or drive a terminal.
    @Test(arguments: ["peer/connect", "peer/listen"])
    func peerHostsAreBoundedAndPrintable(method: String) throws {
        func decode(_ host: JSONValue) throws {
            if method == "peer/connect" { _ = try ConnectRequest(params: ["host": host, "port": 9]) }
            else { _ = try ListenRequest(params: ["host": host, "port": 0]) }
        }
        for bad: JSONValue in ["h\u{1B}[31m\nFAKE LOG", .string(String(repeating: "a", count: 256)), "", "a b", "a\u{202E}b", "a\u{85}"] {
            let error = #expect(throws: ResponseError.self) { try decode(bad) }
            #expect(error?.code == ResponseError.invalidParamsCode && error?.message.hasPrefix("Invalid params: params.host: a host") == true)
            #expect(error?.message.unicodeScalars.contains { $0.value < 0x20 } == false)
        }
        for good: JSONValue in ["127.0.0.1", "::1", "alice-laptop.local", "bücher.example", .string(String(repeating: "a", count: 255))] {
            try decode(good)
        }
        #expect(try ConnectRequest(params: ["port": 9]).target == .tcp(host: "127.0.0.1", port: 9))
    }
}
