import JSON

/// What a JSON-RPC endpoint calls for each well-formed message, in the order received.
/// Requests are answered synchronously: the returned result becomes the reply.
public protocol MessageHandler: AnyObject {
    func handleRequest(id: RequestID, method: String, params: JSONValue?) -> Result<JSONValue, ResponseError>
    func handleNotification(method: String, params: JSONValue?)
    func handleResponse(id: RequestID, result: Result<JSONValue, ResponseError>)
    /// A notification or response that was not valid JSON-RPC: it gets no reply, so say why in the log.
    func dropped(_ reason: String)
}

extension MessageHandler {
    public func handleResponse(id: RequestID, result: Result<JSONValue, ResponseError>) {}
    public func dropped(_ reason: String) {}
}
