import JSON
import Testing
import QuireProtocol

/// Message parameters: every shape error names the member's path.
@Suite struct ParamsTests {
    @Test func editParamsDecodeAllThreeChangeKinds() throws {
        let params: JSONValue = [
            "uri": "a", "revision": 3, "epoch": 1,
            "changes": [
                ["range": ["start": ["line": 0, "character": 1], "end": ["line": 0, "character": 2]], "text": "x"],
                ["lines": ["start": 1, "end": 2], "newLines": ["a", "b"]],
                ["text": "all"],
            ],
        ]
        let edit = try EditDocumentMessage(params: params)
        #expect(edit.changes == [
            .range(WireRange(start: WirePosition(line: 0, character: 1), end: WirePosition(line: 0, character: 2)), text: "x"),
            .lines(1..<2, newLines: ["a", "b"]),
            .full("all"),
        ])
        #expect(try EditDocumentMessage(params: edit.json) == edit)
    }

    static let shapeErrors: [(String, String)] = [
        (#"{"uri":1,"revision":0,"changes":[]}"#, "params.uri: expected a string, got number"),
        (#"{"uri":"a","changes":[]}"#, "params.revision: missing"),
        (#"{"uri":"a","revision":-1,"changes":[]}"#, "params.revision: must not be negative, got -1"),
        (#"{"uri":"a","revision":0,"changes":[{"range":{"start":{"line":"0","character":0},"end":{"line":0,"character":0}},"text":""}]}"#,
         "params.changes[0].range.start.line: expected an integer, got string"),
        (#"{"uri":"a","revision":0,"changes":[{"lines":{"start":2,"end":1},"newLines":[]}]}"#, "params.changes[0].lines: start 2 is after end 1"),
        (#"{"uri":"a","revision":0,"changes":[{"lines":{"start":0,"end":1},"newLines":["a\nb"]}]}"#,
         #"params.changes[0].newLines[0]: a line must not contain "\n""#),
        (#"{"uri":"a","revision":0,"changes":[1]}"#, "params.changes[0]: expected an object, got number"),
        ("[1,2]", "params: expected an object, got array"),
    ]

    @Test(arguments: shapeErrors)
    func shapeErrorsNameThePath(params: String, message: String) throws {
        let value = try JSONParser().parse(params)
        do {
            _ = try EditDocumentMessage(params: value)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == ResponseError.invalidParamsCode)
            #expect(error.message == "Invalid params: " + message)
        }
    }

    @Test func initializeOffersEncodingsInOrder() throws {
        let request = try InitializeRequest(params: [
            "protocolVersion": 1, "clientInfo": ["name": "vim"], "user": ["name": "ann", "color": "#ff0000"],
            "capabilities": ["general": ["positionEncodings": ["utf-8", "utf-16"]]],
        ])
        #expect(request.positionEncodings == ["utf-8", "utf-16"])
        #expect(request.user == WireUser(name: "ann", color: "#ff0000"))
        #expect(try InitializeRequest(params: nil).positionEncodings == [])
    }
}
