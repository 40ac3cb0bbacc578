import ArgumentParser
import Foundation
import Logging
import QuireRelay

/// `quire relay --listen [host:]port`: a relay for daemons that cannot reach each other
/// (`protocol/relay.md`). Holds no secret; runs until SIGTERM, SIGINT or SIGHUP.
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Pair daemons that cannot reach each other (behind NAT) and forward their encrypted bytes.",
        discussion: """
        Run it on a machine both daemons can reach; each daemon dials it with `quire --relay host:port`. \
        It pairs the two daemons that share a secret (by a value derived from it that reveals nothing \
        of it) and forwards bytes; it holds no secret and can read or change nothing. Logs go to stderr.
        """
    )

    @Option(help: "[host:]port to accept daemons on (all IPv4 addresses by default; port 0 picks one).")
    var listen: String

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(help: "Connections held at once, in all.")
    var maxConnections = RelayLimits().maximumConnections

    @Option(help: "Unpaired connections (sending their preamble or waiting for a partner) from one address.")
    var maxUnpairedPerAddress = RelayLimits().maximumUnpairedPerAddress

    @Option(help: "Seconds a new connection has to send its preamble.")
    var preambleTimeout = RelayLimits().preambleTimeout

    @Option(help: "Seconds a connection waits for its partner.")
    var waitTimeout = RelayLimits().waitTimeout

    @Option(help: "Seconds a pair may stay silent before both connections are closed.")
    var idleTimeout = RelayLimits().idleTimeout

    @Option(help: "Bytes per second read from one connection.")
    var bytesPerSecond = RelayLimits().bytesPerSecond

    var limits: RelayLimits {
        var limits = RelayLimits()
        limits.maximumConnections = maxConnections
        limits.maximumUnpairedPerAddress = maxUnpairedPerAddress
        limits.preambleTimeout = preambleTimeout
        limits.waitTimeout = waitTimeout
        limits.idleTimeout = idleTimeout
        limits.bytesPerSecond = bytesPerSecond
        return limits
    }

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level \(logLevel.debugDescription)") }
        do { try limits.validate() } catch { throw ValidationError(error.description) }
        _ = try Self.hostAndPort(listen)
    }

    /// `port`, `host:port` or `[v6]:port`; the host defaults to 0.0.0.0.
    static func hostAndPort(_ spec: String) throws -> (String, Int) {
        var host = "0.0.0.0", portText = Substring(spec)
        if let colon = spec.lastIndex(of: ":") {
            host = String(spec[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            portText = spec[spec.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw ValidationError("--listen \(spec.debugDescription) is not [host:]port")
        }
        return (host, port)
    }

    func run() throws {
        // The stop signals are taken by sigwait below; blocked before any thread starts.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        bootstrapLogging(logLevel)
        let (host, port) = try Self.hostAndPort(listen)
        let server: RelayServer
        let bound: Int
        do {
            server = try RelayServer(limits: limits, logger: Logger(label: "quire-relay"))
            bound = try server.listen(host: host, port: port)
        } catch {
            FileHandle.standardError.write(Data("quire relay: \(error)\n".utf8))
            throw ExitCode(1)
        }
        FileHandle.standardError.write(Data("quire relay: listening on \(host):\(bound)\n".utf8))
        var number: Int32 = 0
        _ = sigwait(&signals, &number)
        server.shutdown()
    }
}
