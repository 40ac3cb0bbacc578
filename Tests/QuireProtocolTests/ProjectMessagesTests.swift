import JSON
import QuireProtocol
import Testing

/// The project requests' params: every value bounded and checked, each refusal naming the member.
@Suite struct ProjectMessagesTests {
    static func refusal(_ make: () throws(ResponseError) -> Void) -> String? {
        do { try make() } catch { return error.code == ResponseError.invalidParamsCode ? error.message : "code \(error.code)" }
        return nil
    }

    @Test func shareReadsRootListenAndRelay() throws {
        let request = try ProjectShareRequest(params: ["root": "/home/ann/proj", "listen": ["0.0.0.0:0", "[::1]:7070", "host.example:1"],
                                                       "relay": "relay.example:443"])
        #expect(request.root == "/home/ann/proj")
        #expect(request.listen == [HostPort(host: "0.0.0.0", port: 0), HostPort(host: "::1", port: 7070), HostPort(host: "host.example", port: 1)])
        #expect(request.listen[1].description == "[::1]:7070")
        #expect(request.relay == HostPort(host: "relay.example", port: 443))
        #expect(try ProjectShareRequest(params: nil).listen.isEmpty)
    }

    @Test func shareRefusesWhatIsOutOfBounds() {
        let cases: [(JSONValue, String)] = [
            (["root": "relative"], "params.root"),
            (["root": .string("/" + String(repeating: "a", count: 5000))], "params.root"),
            (["root": "/a\u{1B}[31m"], "params.root"),
            (["listen": ["host"]], "params.listen[0]"),
            (["listen": ["host:65536"]], "params.listen[0]"),
            (["listen": [":80"]], "params.listen[0]"),
            (["listen": ["a b:80"]], "params.listen[0]"),
            (["listen": .array(Array(repeating: "h:1", count: 9))], "params.listen"),
            (["listen": [1]], "params.listen[0]"),
            (["relay": "relay:0"], "params.relay"),
            (["relay": .string(String(repeating: "r", count: 400) + ":1")], "params.relay"),
        ]
        for (params, member) in cases {
            let message = Self.refusal { () throws(ResponseError) in _ = try ProjectShareRequest(params: params) }
            #expect(message?.contains(member) == true, "\(params): \(message ?? "accepted")")
        }
    }

    @Test func joinStopAndOpenIfShared() throws {
        #expect(try ProjectJoinRequest(params: ["line": "qj1-abc", "directory": "/tmp/x"]).directory == "/tmp/x")
        #expect(Self.refusal { () throws(ResponseError) in _ = try ProjectJoinRequest(params: [:]) }?.contains("params.line") == true)
        #expect(Self.refusal { () throws(ResponseError) in _ = try ProjectJoinRequest(params: ["line": .string(String(repeating: "a", count: 17_601))]) }?.contains("params.line") == true)
        #expect(Self.refusal { () throws(ResponseError) in _ = try ProjectJoinRequest(params: ["line": "x", "directory": "rel"]) }?.contains("params.directory") == true)
        #expect(try ProjectStopRequest(params: ["key": "0123456789abcdef"]).key == "0123456789abcdef")
        for key in ["0123456789ABCDEF", "0123", "0123456789abcdeg", ""] {
            #expect(Self.refusal { () throws(ResponseError) in _ = try ProjectStopRequest(params: ["key": .string(key)]) }?.contains("params.key") == true, "\(key)")
        }
        #expect(try OpenDocumentRequest(params: ["file": "/a/b.txt", "ifShared": true]).ifShared)
        #expect(Self.refusal { () throws(ResponseError) in _ = try OpenDocumentRequest(params: ["uri": "x", "ifShared": true]) }?.contains("params.ifShared") == true)
        #expect(OpenDocumentRequest.Result.notShared.json == ["shared": false])
        #expect(ProjectProgressNotification(key: "k", name: "n", files: 3, written: 1, bytes: 9).json["written"] == 1)
    }
}
