import EditingTraces
import Foundation
import JSON
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Valid messages mutated at random (bytes flipped, cut short, members of the wrong type,
/// huge or negative numbers) never crash the daemon, never leave a request unanswered, and
/// never make the document differ from what the accepted edits say.
@Suite struct MutatedInputTests {
    static let templates: [JSONValue] = [
        ["jsonrpc": "2.0", "id": 1, "method": "document/edit", "params": [
            "uri": "doc", "revision": 0, "changes": [["range": ["start": ["line": 0, "character": 1], "end": ["line": 1, "character": 2]], "text": "x😀\n"]]]],
        ["jsonrpc": "2.0", "id": 2, "method": "document/edit", "params": [
            "uri": "doc", "revision": 0, "changes": [["lines": ["start": 0, "end": 2], "newLines": ["a", "b"]]]]],
        ["jsonrpc": "2.0", "id": 3, "method": "cursor/update", "params": [
            "uri": "doc", "revision": 0, "selections": [["start": ["line": 0, "character": 0], "end": ["line": 2, "character": 1]]]]],
        ["jsonrpc": "2.0", "id": 4, "method": "document/open", "params": ["uri": "other", "text": "t"]],
        ["jsonrpc": "2.0", "id": 5, "method": "peer/listen", "params": ["port": 0]],
        ["jsonrpc": "2.0", "id": 6, "method": "document/resync", "params": ["uri": "doc"]],
    ]

    /// Replaces one scalar somewhere in the value with something of another shape.
    static func mutate(_ value: JSONValue, _ random: inout SeededRandom) -> JSONValue {
        let replacements: [JSONValue] = [.null, .bool(true), .integer(-1), .integer(Int64.max), .integer(1 << 40),
                                         .double(1.5), .string(""), .string("\u{0}"), .array([]), .object([:])]
        switch value {
        case .object(var members) where !members.isEmpty:
            let key = members.keys.sorted()[Int.random(in: 0..<members.count, using: &random)]
            if Int.random(in: 0..<6, using: &random) == 0 { members[key] = nil } else { members[key] = mutate(members[key] ?? .null, &random) }
            return .object(members)
        case .array(var items) where !items.isEmpty:
            let i = Int.random(in: 0..<items.count, using: &random)
            items[i] = mutate(items[i], &random)
            return .array(items)
        default:
            return replacements.randomElement(using: &random) ?? .null
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func mutatedMessagesNeverCrashOrGoUnanswered(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let daemon = Daemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize(encodings: ["utf-16"])
        editor.open("doc", text: "first line\nsecond\nthird\n")
        for _ in 0..<1500 {
            let template = Self.templates.randomElement(using: &random) ?? .null
            var bytes = JSONSerializer().serialize(Self.mutate(template, &random))
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !bytes.isEmpty: bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 1 where bytes.count > 1: bytes.removeLast(Int.random(in: 1..<bytes.count, using: &random))
            default: break
            }
            editor.inbox.removeAll()
            editor.sendRaw(Array("Content-Length: \(bytes.count)\r\n\r\n".utf8) + bytes)
            // Whatever happened, the daemon answers the next request.
            let reply = editor.request("document/list")
            #expect(reply["result"] != nil, "seed \(seed): no answer after \(String(decoding: bytes, as: UTF8.self))")
        }
        // The daemon's text is what its own view of this editor says it is.
        if let document = daemon.documents["doc"], let view = editor.connection.session.view(of: "doc") {
            #expect(view.sent.string == document.text.string)
            document.text.scalars._checkInvariants()
        }
    }
}
