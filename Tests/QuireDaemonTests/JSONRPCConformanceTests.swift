import Foundation
import JSON
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// The JSON-RPC 2.0 specification's examples sent to the daemon itself: structural errors must
/// match exactly; calls to the spec's example methods (which Quire does not have) must get
/// -32601 with their id echoed, and notifications nothing at all.
@Suite struct JSONRPCConformanceTests {
    static let cases: [JSONValue] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/conformance/jsonrpc-examples.jsonl").path
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONParser().parse(String($0)) }
    }()

    @Test func casesAreFound() { #expect(Self.cases.count == 15) }

    /// What the daemon must answer: the spec's expectation, with method results replaced by -32601.
    static func expectedReply(_ example: JSONValue) -> JSONValue? {
        func rewrite(_ response: JSONValue) -> JSONValue {
            guard case .object(var o) = response else { return response }
            if o["result"] != nil { o["result"] = nil; o["error"] = ["code": -32601] }
            if let error = o["error"] { o["error"] = ["code": error["code"] ?? .null] }
            return .object(o)
        }
        switch example["expect"] {
        case nil, .null?: return nil
        case .array(let items)?: return .array(items.map(rewrite))
        case let single?: return rewrite(single)
        }
    }

    static func normalized(_ reply: JSONValue) -> JSONValue {
        func one(_ r: JSONValue) -> JSONValue {
            guard case .object(var o) = r else { return r }
            if let error = o["error"] { o["error"] = ["code": error["code"] ?? .null] }
            return .object(o)
        }
        if case .array(let items) = reply {
            return .array(items.map(one).sorted { JSONSerializer(sortedKeys: true).string($0) < JSONSerializer(sortedKeys: true).string($1) })
        }
        return one(reply)
    }

    @Test(arguments: 0..<15)
    func specificationExampleAgainstTheDaemon(index: Int) throws {
        guard index < Self.cases.count else { Issue.record("missing case \(index)"); return }
        let example = Self.cases[index]
        for lineMode in [false, true] {
            let editor = TestEditor(daemon: Daemon())
            if lineMode { editor.sendRaw(Array("{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\"}\n".utf8)) } else { editor.initialize() }
            editor.inbox.removeAll()
            let send = example["send"]?.stringValue ?? ""
            if lineMode { editor.sendRaw(Array((send + "\n").utf8)) } else { editor.sendRaw(send) }
            let replies = editor.inbox
            if let expected = Self.expectedReply(example) {
                #expect(replies.count == 1, "\(example["name"] ?? .null)")
                if let reply = replies.first {
                    #expect(Self.normalized(reply) == Self.normalized(expected), "\(example["name"] ?? .null)")
                }
            } else {
                #expect(replies.isEmpty, "a notification gets no reply: \(example["name"] ?? .null)")
            }
            // The daemon goes on serving, in the framing the stream started with.
            editor.inbox.removeAll()
            let list = #"{"jsonrpc":"2.0","id":"list","method":"document/list"}"#
            if lineMode { editor.sendRaw(Array((list + "\n").utf8)) } else { editor.sendRaw(list) }
            #expect(editor.inbox.first?["result"] == [])
        }
    }
}
