import JSON

/// A request an editor sends the daemon, as a type: its `method`, its `params` decoded and
/// checked in `init(params:)` (every shape error is -32602 naming the member's path), and the
/// type of its reply. `MessageRegistry.requests` lists every one; the daemon dispatches by it.
public protocol EditorRequest: Sendable {
    associatedtype Result: MessageResult
    static var method: String { get }
    init(params: JSONValue?) throws(ResponseError)
}

/// A notification an editor sends the daemon: its `method` and its `params` decoded and checked.
/// `MessageRegistry.editorNotifications` lists every one.
public protocol EditorNotification: Sendable {
    static var method: String { get }
    init(params: JSONValue?) throws(ResponseError)
}

/// A notification the daemon sends editors: its `method` and the `params` it encodes itself.
/// `MessageRegistry.daemonNotifications` lists every one.
public protocol DaemonNotification: Sendable {
    static var method: String { get }
    var json: JSONValue { get }
}

extension DaemonNotification {
    /// The notification as a JSON-RPC message, ready to frame.
    public var message: Message { .notification(method: Self.method, params: json) }
}

/// The reply to a request: a value that encodes itself as the response's `result`.
public protocol MessageResult: Sendable {
    var json: JSONValue { get }
}

/// The reply of a request that answers nothing but that it was done: `null`.
public struct NullResult: MessageResult, Equatable {
    public init() {}
    public var json: JSONValue { .null }
}
