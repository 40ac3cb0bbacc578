import JSON

/// `peer/disconnect` (editor -> daemon, request): take peer link `link` down. The reply is `null`.
public struct DisconnectRequest: EditorRequest, Equatable {
    public typealias Result = NullResult
    public static let method = "peer/disconnect"

    public var link: Int

    public init(params: JSONValue?) throws(ResponseError) {
        link = try ParamsReader(params).int("link")
    }
}
