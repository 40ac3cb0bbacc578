import JSON

/// `document/redo` (editor -> daemon, request): reapply this session's last step of `uri` that
/// `document/undo` reverted. The reply is an `UndoResult`.
public struct RedoDocumentRequest: EditorRequest, Equatable {
    public typealias Result = UndoResult
    public static let method = "document/redo"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }
}
