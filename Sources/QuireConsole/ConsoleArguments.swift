import QuireDaemon
import QuireProtocol

/// The command-line values of `quire share` and `quire join` that go to the daemon, checked
/// before any daemon is started: each refusal says what is wrong with a cleaned, bounded part of
/// what was typed.
public enum ConsoleArguments {
    /// The longest `--via` command taken.
    public static let maximumViaBytes = 1024

    /// `--listen`: `port` (every interface: the partner is on another machine), `host:port` or
    /// `[v6]:port`; port 0 picks one. Returns `host:port` as `project/share` takes it.
    public static func listenAddress(_ spec: String) throws(ConsoleArgumentError) -> String {
        let (host, port) = try hostAndPort(spec, option: "--listen", defaultHost: "0.0.0.0", portRange: 0...65535)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `--relay host:port`.
    public static func relayAddress(_ spec: String) throws(ConsoleArgumentError) -> String {
        let (host, port) = try hostAndPort(spec, option: "--relay", defaultHost: nil, portRange: 1...65535)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `--via 'ssh host'`: the command that reaches the sharing machine, trimmed, as
    /// `project/join`'s `via` takes it (the daemon runs `quire peer --stdio` after it).
    public static func viaCommand(_ via: String) throws(ConsoleArgumentError) -> String {
        let trimmed = via.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= maximumViaBytes else {
            throw ConsoleArgumentError("--via takes a command of 1 to \(maximumViaBytes) bytes that reaches the other machine, such as 'ssh host'")
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || (0x80...0x9F).contains($0.value) }) else {
            throw ConsoleArgumentError("--via \(shown(via)): a command has no control characters (no line breaks)")
        }
        return trimmed
    }

    static func hostAndPort(_ spec: String, option: String, defaultHost: String?, portRange: ClosedRange<Int>) throws(ConsoleArgumentError) -> (String, Int) {
        var host = defaultHost
        var portText = Substring(spec)
        if let colon = spec.lastIndex(of: ":") {
            var hostPart = spec[..<colon]
            if hostPart.hasPrefix("["), hostPart.hasSuffix("]") { hostPart = hostPart.dropFirst().dropLast() }
            host = String(hostPart)
            portText = spec[spec.index(after: colon)...]
        }
        let form = defaultHost == nil ? "host:port" : "[host:]port"
        guard let host, !host.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), portRange.contains(port) else {
            throw ConsoleArgumentError("\(option) \(shown(spec)) is not \(form) (port \(portRange.lowerBound) to \(portRange.upperBound))")
        }
        // The editor's peer/connect rule: the host is logged, shown and put in the join line.
        guard host.utf8.count <= 255, ParamsReader.isPrintableHost(host) else {
            throw ConsoleArgumentError("\(option) \(shown(spec)): a host has 1 to 255 bytes with no spaces or control characters")
        }
        return (host, port)
    }

    static func shown(_ text: String) -> String {
        "\"\(DisplayText.clean(text, limit: 80))\""
    }
}

/// A refused command-line value, worded for the person who typed it.
public struct ConsoleArgumentError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self).unicodeScalars
        while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
