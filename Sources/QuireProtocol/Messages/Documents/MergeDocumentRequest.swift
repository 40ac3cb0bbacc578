import JSON

/// `document/merge` (editor -> daemon, request): copies the text of document `from` (typically
/// `name#id`, a copy of the same name created separately on another daemon) to the end of
/// document `uri`, which this session has open, as this session's edit (so it can be undone).
/// The reply is `{uri, merged}`, the number of characters copied; the text reaches the editor
/// as a daemon edit. `from` is left as it was.
public struct MergeDocumentRequest: EditorRequest, Equatable {
    public static let method = "document/merge"

    public var uri: String
    public var from: String

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        from = try reader.string("from")
        guard uri != from else { throw .invalidParams("params.from: a document cannot be merged into itself") }
    }

    /// `{uri, merged}`: the number of characters copied to the end of `uri`.
    public struct Result: MessageResult, Equatable {
        public var uri: String
        public var merged: Int

        public init(uri: String, merged: Int) {
            self.uri = uri
            self.merged = merged
        }

        public var json: JSONValue { ["uri": .string(uri), "merged": .integer(Int64(merged))] }
    }
}
