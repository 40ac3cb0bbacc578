import JSON

/// `project/stop` (editor -> daemon, request): stops sharing or following project `key` (16
/// lowercase hex digits): its links close, its secret is forgotten, and it leaves
/// `project/list`; its documents and its files on disk stay. Answers `null`.
public struct ProjectStopRequest: EditorRequest, Equatable {
    public static let method = "project/stop"

    public var key: String

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        key = try reader.string("key")
        guard key.utf8.count == 16, key.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw .invalidParams("params.key: a project key is 16 lowercase hex digits, got \(ResponseError.shownMethod(key))")
        }
    }

    public typealias Result = NullResult
}
