import JSON

/// The editor's side of peering: `peer/listen`, `peer/stopListening`, `peer/connect`,
/// `peer/disconnect`, `peer/status` (requests) and `peer/changed` (daemon -> editor notification).
public enum PeerRequests {
    public static let listenMethod = "peer/listen"
    public static let stopListeningMethod = "peer/stopListening"
    public static let connectMethod = "peer/connect"
    public static let disconnectMethod = "peer/disconnect"
    public static let statusMethod = "peer/status"
    public static let changedMethod = "peer/changed"

    /// `peer/listen` params: `host` (default loopback) and `port` (0 picks a free one).
    public struct Listen: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(params: JSONValue?) throws(ResponseError) {
            let reader = try ParamsReader(params)
            host = try reader.optionalString("host") ?? "127.0.0.1"
            port = try reader.optionalInt("port") ?? 0
            guard (0...65535).contains(port) else { throw .invalidParams("params.port: \(port) is not a TCP port") }
        }
    }

    /// `peer/connect` params: `host` and `port`, or `command` (run with /bin/sh, peer over its
    /// stdio); with `relay: true`, `host` and `port` are a relay's, dialed until it pairs this
    /// daemon with another of the same secret (`protocol/relay.md`).
    public enum Connect: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case relay(host: String, port: Int)
        case command(String)

        public init(params: JSONValue?) throws(ResponseError) {
            let reader = try ParamsReader(params)
            let relay = try reader.optionalBool("relay") ?? false
            if let command = try reader.optionalString("command") {
                guard !relay else { throw .invalidParams("params.relay: a relay is dialed by host and port, not by a command") }
                guard !command.isEmpty else { throw .invalidParams("params.command: must not be empty") }
                self = .command(command)
                return
            }
            let port = try reader.int("port")
            guard (1...65535).contains(port) else { throw .invalidParams("params.port: \(port) is not a TCP port") }
            let host = try reader.optionalString("host") ?? "127.0.0.1"
            self = relay ? .relay(host: host, port: port) : .tcp(host: host, port: port)
        }
    }

    /// `peer/connect`'s optional `fingerprint`: accept only a peer whose identity key has it
    /// (32 hex digits; case and separators do not matter). Returned as typed.
    public static func fingerprint(_ params: JSONValue?) throws(ResponseError) -> String? {
        guard let text = try ParamsReader(params).optionalString("fingerprint") else { return nil }
        let digits = text.lowercased().filter(\.isHexDigit)
        guard digits.count == 32, text.count <= 64 else {
            throw .invalidParams("params.fingerprint: a key fingerprint has 32 hex digits (as peer/status shows it), got \(text.prefix(64).debugDescription)")
        }
        return text
    }

    /// `peer/disconnect` and `peer/stopListening` params.
    public static func link(_ params: JSONValue?) throws(ResponseError) -> Int { try ParamsReader(params).int("link") }
    public static func port(_ params: JSONValue?) throws(ResponseError) -> Int { try ParamsReader(params).int("port") }
}
