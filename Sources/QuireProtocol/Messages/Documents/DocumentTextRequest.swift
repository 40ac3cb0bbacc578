import JSON

/// `document/text` (editor -> daemon, request): the text the daemon has sent this editor of
/// document `uri`, with its epoch and hash.
public struct DocumentTextRequest: EditorRequest, Equatable {
    public typealias Result = DocumentTextResult
    public static let method = "document/text"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }
}

/// The reply to `document/text` and `document/resync`: `{uri, text, epoch, hash}`, `hash` the
/// SHA-256 (hex) of `text`.
public struct DocumentTextResult: MessageResult, Equatable {
    public var uri: String
    public var text: String
    public var epoch: Int
    public var hash: String

    public init(uri: String, text: String, epoch: Int, hash: String) {
        self.uri = uri
        self.text = text
        self.epoch = epoch
        self.hash = hash
    }

    public var json: JSONValue {
        ["uri": .string(uri), "text": .string(text), "epoch": .integer(Int64(epoch)), "hash": .string(hash)]
    }
}
