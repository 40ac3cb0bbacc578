import JSON

/// `document/close` (editor -> daemon, request): stop sharing document `uri` in this session.
/// The reply is `null`.
public struct CloseDocumentRequest: EditorRequest, Equatable {
    public typealias Result = NullResult
    public static let method = "document/close"

    public var uri: String

    public init(params: JSONValue?) throws(ResponseError) {
        uri = try ParamsReader(params).string("uri")
    }
}
