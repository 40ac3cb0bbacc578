import JSON

/// One JSON-RPC 2.0 message, decoded and checked against the spec's shapes.
public enum Message: Sendable, Equatable {
    case request(id: RequestID, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)
    case response(id: RequestID, result: Result<JSONValue, ResponseError>)

    /// A value that is valid JSON but not a JSON-RPC message; keeps the id when one was readable,
    /// so the error reply still carries it.
    public struct DecodingError: Error, Sendable, Equatable {
        public var id: RequestID?
        public var error: ResponseError
    }

    /// Decodes one message object (not a batch).
    public static func decode(_ value: JSONValue) -> Result<Message, DecodingError> {
        guard case .object(let members) = value else {
            return .failure(DecodingError(id: nil, error: .invalidRequest("expected an object, got \(value.typeName)")))
        }
        var id: RequestID?
        if let rawID = members["id"] {
            guard let parsed = RequestID(rawID) else {
                return .failure(DecodingError(id: nil, error: .invalidRequest("id must be a string, number or null, got \(rawID.typeName)")))
            }
            id = parsed
        }
        let fail = { (detail: String) in Result<Message, DecodingError>.failure(DecodingError(id: id, error: .invalidRequest(detail))) }
        guard members["jsonrpc"] == "2.0" else { return fail("\"jsonrpc\" must be \"2.0\"") }
        if let rawMethod = members["method"] {
            guard case .string(let method) = rawMethod else { return fail("method must be a string, got \(rawMethod.typeName)") }
            let params = members["params"]
            if let params {
                switch params {
                case .array, .object: break
                default: return fail("params must be an array or an object, got \(params.typeName)")
                }
            }
            if let id { return .success(.request(id: id, method: method, params: params)) }
            return .success(.notification(method: method, params: params))
        }
        // A response.
        guard let id else { return fail("a message needs a method (request) or an id (response)") }
        switch (members["result"], members["error"]) {
        case (let result?, nil):
            return .success(.response(id: id, result: .success(result)))
        case (nil, let error?):
            guard let code = error["code"]?.integerValue, let message = error["message"]?.stringValue else {
                return fail("error must be an object with an integer code and a string message")
            }
            return .success(.response(id: id, result: .failure(ResponseError(code: Int(code), message: message, data: error["data"]))))
        default:
            return fail("a response has exactly one of result and error")
        }
    }

    /// The message as a JSON value, with `"jsonrpc": "2.0"`.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["jsonrpc": "2.0"]
        switch self {
        case .request(let id, let method, let params):
            members["id"] = id.json
            members["method"] = .string(method)
            if let params { members["params"] = params }
        case .notification(let method, let params):
            members["method"] = .string(method)
            if let params { members["params"] = params }
        case .response(let id, let result):
            members["id"] = id.json
            switch result {
            case .success(let value): members["result"] = value
            case .failure(let error): members["error"] = error.json
            }
        }
        return .object(members)
    }

    /// An error response to a request whose id may be unknown (`null`).
    public static func errorResponse(id: RequestID?, _ error: ResponseError) -> Message {
        .response(id: id ?? .null, result: .failure(error))
    }
}
