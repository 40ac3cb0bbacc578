import Foundation
import JSON
import Testing
import QuireProtocol

/// JSON-RPC 2.0 semantics against the specification's own examples
/// (../shared/conformance/jsonrpc-examples.jsonl), with the spec's example methods registered
/// on a test handler, plus the shapes the spec leaves to us.
@Suite struct MessageProcessorTests {
    /// The spec's example methods: subtract, sum, get_data, and notifications that do nothing.
    final class SpecHandler: MessageHandler {
        var notifications: [String] = []

        func handleRequest(id: RequestID, method: String, params: JSONValue?) -> Result<JSONValue, ResponseError> {
            switch (method, params) {
            case ("subtract", .array(let a)?) where a.count == 2:
                guard let x = a[0].integerValue, let y = a[1].integerValue else { return .failure(.invalidParams("numbers")) }
                return .success(.integer(x - y))
            case ("subtract", .object(let o)?):
                guard let x = o["minuend"]?.integerValue, let y = o["subtrahend"]?.integerValue else { return .failure(.invalidParams("numbers")) }
                return .success(.integer(x - y))
            case ("sum", .array(let a)?):
                return .success(.integer(a.compactMap(\.integerValue).reduce(0, +)))
            case ("get_data", _):
                return .success(["hello", 5])
            default:
                return .failure(.methodNotFound(method))
            }
        }

        func handleNotification(method: String, params: JSONValue?) { notifications.append(method) }
    }

    struct Example: CustomTestStringConvertible, Sendable {
        var name: String
        var send: String
        var expect: JSONValue
        var orderInsensitive: Bool
        var testDescription: String { name }
    }

    static let examples: [Example] = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<8 {
            url.deleteLastPathComponent()
            let path = url.appendingPathComponent("shared/conformance/jsonrpc-examples.jsonl").path
            if let data = FileManager.default.contents(atPath: path) {
                return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
                    guard let case_ = try? JSONParser().parse(String(line)), let name = case_["name"]?.stringValue,
                          let send = case_["send"]?.stringValue else { return nil }
                    return Example(name: name, send: send, expect: case_["expect"] ?? .null,
                                   orderInsensitive: case_["batch_order_insensitive"] == .bool(true))
                }
            }
        }
        return []
    }()

    @Test func examplesAreFound() { #expect(Self.examples.count == 15) }

    @Test(arguments: examples)
    func specificationExample(_ example: Example) throws {
        let reply = MessageProcessor().process(Array(example.send.utf8), with: SpecHandler())
        guard example.expect != .null else {
            #expect(reply == nil, "a notification must get no reply")
            return
        }
        let got = try #require(reply)
        // Compare jsonrpc, id, result and error.code exactly; error.message must be a string.
        #expect(Self.normalized(got, sort: example.orderInsensitive) == Self.normalized(example.expect, sort: example.orderInsensitive))
        for response in got.arrayValue ?? [got] {
            #expect(!(response["result"] != nil && response["error"] != nil))
            if let error = response["error"] { #expect(error["message"]?.stringValue != nil) }
        }
    }

    static func normalized(_ value: JSONValue, sort: Bool) -> JSONValue {
        func one(_ v: JSONValue) -> JSONValue {
            guard case .object(var o) = v else { return v }
            if let error = o["error"] { o["error"] = ["code": error["code"] ?? .null] }
            return .object(o)
        }
        if case .array(let items) = value {
            let mapped = items.map(one)
            return .array(sort ? mapped.sorted { JSONSerializer(sortedKeys: true).string($0) < JSONSerializer(sortedKeys: true).string($1) } : mapped)
        }
        return one(value)
    }

    @Test func idIsEchoedWithItsType() throws {
        let handler = SpecHandler()
        let byString = try #require(MessageProcessor().process(Array(#"{"jsonrpc":"2.0","method":"get_data","id":"1"}"#.utf8), with: handler))
        #expect(byString["id"] == "1")
        let byNumber = try #require(MessageProcessor().process(Array(#"{"jsonrpc":"2.0","method":"get_data","id":1}"#.utf8), with: handler))
        #expect(byNumber["id"] == 1)
    }

    @Test(arguments: [
        #"{"method":"sum","params":[1],"id":1}"#,
        #"{"jsonrpc":"1.0","method":"sum","params":[1],"id":1}"#,
        #"{"jsonrpc":"2.0","method":"sum","params":3,"id":1}"#,
        #"{"jsonrpc":"2.0","id":1}"#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
    ])
    func malformedRequestKeepsItsID(text: String) throws {
        let reply = try #require(MessageProcessor().process(Array(text.utf8), with: SpecHandler()))
        #expect(reply["error"]?["code"] == .integer(Int64(ResponseError.invalidRequestCode)))
        #expect(reply["id"] == 1)
    }

    @Test func idOfAWrongTypeIsNull() throws {
        let reply = try #require(MessageProcessor().process(Array(#"{"jsonrpc":"2.0","method":"sum","id":{"a":1}}"#.utf8), with: SpecHandler()))
        #expect(reply["error"]?["code"] == -32600)
        #expect(reply["id"] == .null)
    }

    @Test func responsesFromTheClientGetNoReply() {
        #expect(MessageProcessor().process(Array(#"{"jsonrpc":"2.0","id":7,"result":null}"#.utf8), with: SpecHandler()) == nil)
    }

    @Test func oversizedBatchIsRefusedWhole() throws {
        let handler = SpecHandler()
        let batch = "[" + Array(repeating: #"{"jsonrpc":"2.0","method":"n"}"#, count: 11).joined(separator: ",") + "]"
        let reply = try #require(MessageProcessor(maximumBatchSize: 10).process(Array(batch.utf8), with: handler))
        #expect(reply["error"]?["code"] == -32600)
        #expect(handler.notifications.isEmpty)
    }

    @Test func invalidUTF8IsAParseError() throws {
        let reply = try #require(MessageProcessor().process([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], with: SpecHandler()))
        #expect(reply["error"]?["code"] == -32700)
        #expect(reply["id"] == .null)
    }
}
