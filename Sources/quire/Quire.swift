import ArgumentParser
import Logging
import QuireDaemon
import ReplicatingTypes

/// The `quire` command line: by default the daemon, serving one editor on stdio.
@main
struct Quire: ParsableCommand {
    static let version = "0.2.0"

    static let configuration = CommandConfiguration(
        commandName: "quire",
        abstract: "Collaborative text-editing daemon: editors attach over stdio with JSON-RPC 2.0.",
        discussion: """
        With no subcommand, serves the editor that started it on stdin/stdout (LSP Content-Length \
        frames, or one JSON message per line when the first byte is '{' or '['). Logs go to stderr. \
        The protocol is described in protocol/README.md.
        """,
        version: "\(version) (CRDT format \(ReplicatingTypesInfo.formatVersion))",
        subcommands: [Attach.self]
    )

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    @Option(help: "Also accept editors on this Unix socket (they connect with `quire attach PATH`).")
    var socket: String?

    @Flag(help: "Do not serve stdin/stdout (with --socket: serve the socket only, until killed).")
    var noStdio = false

    @Option(help: "Largest accepted message, in bytes.")
    var maxFrameBytes: Int = 8 << 20

    @Option(help: "Deepest accepted nesting of JSON arrays and objects.")
    var maxNestingDepth: Int = 64

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level \(logLevel.debugDescription)")
        }
        guard maxFrameBytes >= 1024 else { throw ValidationError("--max-frame-bytes must be at least 1024") }
        guard (8...2048).contains(maxNestingDepth) else { throw ValidationError("--max-nesting-depth must be between 8 and 2048") }
        if noStdio && socket == nil { throw ValidationError("--no-stdio needs --socket: there would be nothing to serve") }
    }

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "quire")
        let daemon = Daemon(configuration: Daemon.Configuration(maximumFrameBytes: maxFrameBytes, maximumNestingDepth: maxNestingDepth, serverVersion: Self.version), logger: logger)
        let server = DaemonServer(daemon: daemon, options: DaemonServer.Options(serveStdio: !noStdio, socketPath: socket), logger: logger)
        let status = try server.run()
        throw ExitCode(status)
    }
}

/// `quire attach PATH`: bridges stdio to a daemon started with `--socket PATH`.
struct Attach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bridge stdin/stdout to a running daemon's Unix socket (a second editor).")

    @Argument(help: "The socket the daemon was started with (--socket).")
    var socketPath: String

    func run() throws {
        throw ExitCode(try AttachBridge.run(socketPath: socketPath))
    }
}
