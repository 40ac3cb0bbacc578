import JSON

/// `peer/stopListening` (editor -> daemon, request): stop accepting links on `port`; live links
/// stay up. The reply is `{stopped}`, false when the daemon was not listening there.
public struct StopListeningRequest: EditorRequest, Equatable {
    public static let method = "peer/stopListening"

    public var port: Int

    public init(params: JSONValue?) throws(ResponseError) {
        port = try ParamsReader(params).int("port")
    }

    /// `{stopped}`.
    public struct Result: MessageResult, Equatable {
        public var stopped: Bool

        public init(stopped: Bool) {
            self.stopped = stopped
        }

        public var json: JSONValue { ["stopped": .bool(stopped)] }
    }
}
