import JSON

/// `document/undo` (editor -> daemon, request): revert this session's last step of its own
/// edits of `uri` that still changes something, leaving others' edits alone. The change reaches
/// the editor as a daemon edit; the reply says whether there was a step.
public struct UndoDocumentRequest: EditorRequest, Equatable {
    public typealias Result = UndoResult
    public static let method = "document/undo"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }
}

/// The reply to `document/undo` and `document/redo`: `{uri, done}`; `done` is false when the
/// session had nothing left to undo (or redo).
public struct UndoResult: MessageResult, Equatable {
    public var uri: String
    public var done: Bool

    public init(uri: String, done: Bool) {
        self.uri = uri
        self.done = done
    }

    public var json: JSONValue { ["uri": .string(uri), "done": .bool(done)] }
}
