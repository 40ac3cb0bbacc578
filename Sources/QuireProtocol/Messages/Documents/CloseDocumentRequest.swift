import JSON

/// `document/close` (editor -> daemon, request): stop sharing document `uri` in this session.
/// The reply is `null`.
public struct CloseDocumentRequest: EditorRequest, Equatable {
    public typealias Result = NullResult
    public static let method = "document/close"

    public var uri: String
    /// The editor rebinds the buffer (`:saveas`, `write-file`) and opens the document again at
    /// once, naming this view: the daemon keeps it as it keeps the view of an editor that went
    /// away, so the reopen is resolved against it by identity.
    public var keepView: Bool

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        keepView = try reader.optionalBool("keepView") ?? false
    }
}
