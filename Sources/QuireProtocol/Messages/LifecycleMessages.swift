import JSON

/// The LSP lifecycle messages that carry no parameters of interest.
public enum LifecycleMethod {
    /// `initialized` (editor -> daemon, notification): the editor has read the `initialize` reply.
    public static let initialized = "initialized"
    /// `shutdown` (editor -> daemon, request): finish up; the reply is `null`, then only `exit` is accepted.
    public static let shutdown = "shutdown"
    /// `exit` (editor -> daemon, notification): the daemon ends, with status 0 after `shutdown` and 1 otherwise.
    public static let exit = "exit"
    /// `$/cancelRequest` (notification): requests are answered in order as they arrive, so by the
    /// time a cancellation is read its request has been answered; it is accepted and ignored.
    public static let cancelRequest = "$/cancelRequest"
}

/// `$/cancelRequest` params: the id of the request to cancel.
public struct CancelRequestNotification: Sendable {
    public var id: RequestID

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        guard let raw = reader.members["id"], let id = RequestID(raw), id != .null else {
            throw .invalidParams("params.id: expected a string or a number")
        }
        self.id = id
    }
}
