import JSON

/// `initialized` (editor -> daemon, notification): the editor has read the `initialize` reply.
public struct InitializedNotification: EditorNotification {
    public static let method = "initialized"
    public init(params: JSONValue?) throws(ResponseError) {}
}

/// `shutdown` (editor -> daemon, request): finish up; the reply is `null`, then only `exit` is
/// accepted.
public struct ShutdownRequest: EditorRequest {
    public typealias Result = NullResult
    public static let method = "shutdown"
    public init(params: JSONValue?) throws(ResponseError) {}
}

/// `exit` (editor -> daemon, notification): the daemon ends, with status 0 after `shutdown` and
/// 1 otherwise.
public struct ExitNotification: EditorNotification {
    public static let method = "exit"
    public init(params: JSONValue?) throws(ResponseError) {}
}

/// `$/cancelRequest` (notification): requests are answered in order as they arrive, so by the
/// time a cancellation is read its request has been answered; it is accepted and ignored. Its
/// params: the id of the request to cancel.
public struct CancelRequestNotification: EditorNotification {
    public static let method = "$/cancelRequest"

    public var id: RequestID

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        guard let raw = reader.members["id"], let id = RequestID(raw), id != .null else {
            throw .invalidParams("params.id: expected a string or a number")
        }
        self.id = id
    }
}
