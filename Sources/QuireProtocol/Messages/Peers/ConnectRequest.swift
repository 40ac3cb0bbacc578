import JSON

/// `peer/connect` (editor -> daemon, request): link to a peer at `host` (default loopback) and
/// `port`, or over the stdio of `command` (run with /bin/sh); with `relay: true`, `host` and
/// `port` are a relay's, dialed until it pairs this daemon with another of the same secret
/// (`protocol/relay.md`). With `fingerprint`, accept only a peer whose identity key has it. The reply is `null`; the link comes up asynchronously
/// (`peer/changed`).
public struct ConnectRequest: EditorRequest, Equatable {
    public typealias Result = NullResult
    public static let method = "peer/connect"

    /// Where the peer is.
    public enum Target: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case relay(host: String, port: Int)
        case command(String)
    }

    public var target: Target
    /// 32 hex digits, as sent (case and separators do not matter).
    public var fingerprint: String?

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        let relay = try reader.optionalBool("relay") ?? false
        if let command = try reader.optionalString("command") {
            guard !relay else { throw .invalidParams("params.relay: a relay is dialed by host and port, not by a command") }
            guard !command.isEmpty else { throw .invalidParams("params.command: must not be empty") }
            target = .command(command)
        } else {
            let port = try reader.int("port")
            guard (1...65535).contains(port) else { throw .invalidParams("params.port: \(port) is not a TCP port") }
            let host = try reader.optionalString("host") ?? "127.0.0.1"
            target = relay ? .relay(host: host, port: port) : .tcp(host: host, port: port)
        }
        if let text = try reader.optionalString("fingerprint") {
            let digits = text.lowercased().filter(\.isHexDigit)
            guard digits.count == 32, text.count <= 64 else {
                throw .invalidParams("params.fingerprint: a key fingerprint has 32 hex digits (as peer/status shows it), got \(text.prefix(64).debugDescription)")
            }
            fingerprint = text
        }
    }
}
