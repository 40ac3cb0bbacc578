import JSON

/// Turns one frame body into calls on a `MessageHandler` and the reply to send back, following
/// JSON-RPC 2.0 to the letter.
///
/// Guarantees:
/// 1. Every request gets exactly one response; notifications and responses get none.
/// 2. Bytes that are not JSON (including invalid UTF-8) get one -32700 with id null.
/// 3. JSON that is not a message gets -32600, with the id when it was readable.
/// 4. Batches: `[]` gets a single -32600; otherwise each element is handled in order and the
///    replies come back as one array, or nothing at all when every element was a notification.
/// 5. Batches nested deeper than one level and batches over `maximumBatchSize` are refused whole.
public struct MessageProcessor {
    public var parser: JSONParser
    public var maximumBatchSize: Int

    public init(parser: JSONParser = JSONParser(maximumDepth: 64), maximumBatchSize: Int = 1000) {
        self.parser = parser
        self.maximumBatchSize = maximumBatchSize
    }

    /// Handles one frame body; returns the reply to frame and send, or nil for none.
    public func process(_ body: [UInt8], with handler: some MessageHandler) -> JSONValue? {
        let value: JSONValue
        do {
            value = try parser.parse(body)
        } catch {
            return Message.errorResponse(id: nil, .parseError(error.description)).json
        }
        guard case .array(let items) = value else { return handle(value, with: handler) }
        guard !items.isEmpty else { return Message.errorResponse(id: nil, .invalidRequest("empty batch")).json }
        guard items.count <= maximumBatchSize else {
            return Message.errorResponse(id: nil, .invalidRequest("batch of \(items.count) messages exceeds the limit of \(maximumBatchSize)")).json
        }
        let replies = items.compactMap { handle($0, with: handler) }
        return replies.isEmpty ? nil : .array(replies)
    }

    private func handle(_ value: JSONValue, with handler: some MessageHandler) -> JSONValue? {
        switch Message.decode(value) {
        case .failure(let failure):
            return Message.errorResponse(id: failure.id, failure.error).json
        case .success(.request(let id, let method, let params)):
            return Message.response(id: id, result: handler.handleRequest(id: id, method: method, params: params)).json
        case .success(.notification(let method, let params)):
            handler.handleNotification(method: method, params: params)
            return nil
        case .success(.response(let id, let result)):
            handler.handleResponse(id: id, result: result)
            return nil
        }
    }
}
