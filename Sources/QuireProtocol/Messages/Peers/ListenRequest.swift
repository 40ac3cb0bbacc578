import JSON

/// `peer/listen` (editor -> daemon, request): accept peer links on `host` (default loopback) and
/// `port` (0 picks a free one). The reply is `{port}`, the port listened on.
public struct ListenRequest: EditorRequest, Equatable {
    public static let method = "peer/listen"

    public var host: String
    public var port: Int

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        host = try reader.optionalString("host") ?? "127.0.0.1"
        port = try reader.optionalInt("port") ?? 0
        guard (0...65535).contains(port) else { throw .invalidParams("params.port: \(port) is not a TCP port") }
    }

    /// `{port}`: the port listened on (the one picked when 0 was asked).
    public struct Result: MessageResult, Equatable {
        public var port: Int

        public init(port: Int) {
            self.port = port
        }

        public var json: JSONValue { ["port": .integer(Int64(port))] }
    }
}
