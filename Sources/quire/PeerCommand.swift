import ArgumentParser
import Foundation
import Logging
import QuireDaemon

/// `quire peer --stdio`: the far end of `--connect-command 'ssh host quire peer --stdio'`.
///
/// When a running daemon holds the data directory, this process only bridges its stdin/stdout
/// to that daemon's peer socket (`EditorSocketLocation.peerSocketPath`): the link is that
/// daemon's, with its documents, key and secrets, and this process needs no secret of its own.
/// Otherwise it is a daemon of its own that speaks the peer protocol on stdin/stdout, and that
/// needs a secret (QUIRE_SECRET or --secret-file).
struct Peer: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Speak the peer protocol on stdin/stdout (the far end of --connect-command).",
        discussion: """
        When a running quire holds the data directory, this one bridges stdin/stdout to that \
        daemon's peer socket, so the link reaches the running daemon (its documents, its key); \
        otherwise it runs a daemon of its own, which needs QUIRE_SECRET or --secret-file.
        """
    )

    @Flag(help: "Peer over stdin/stdout (required: the only mode so far).")
    var stdio = false

    @Option(help: "Also accept editors on this Unix socket (a daemon of its own only: never bridges).")
    var socket: String?

    @Option(help: "Log level.")
    var logLevel: String = "warning"

    @OptionGroup var peering: PeeringOptions

    @OptionGroup var storage: StorageOptions

    func validate() throws {
        guard stdio else { throw ValidationError("quire peer needs --stdio") }
    }

    /// Bridging is for a plain `quire peer --stdio`: with its own socket or peering asked for,
    /// this process must be a daemon itself.
    private var mayBridge: Bool {
        socket == nil && peering.listen.isEmpty && peering.connect.isEmpty && peering.connectCommand.isEmpty && peering.relay.isEmpty
    }

    func run() throws {
        bootstrapLogging(logLevel)
        let logger = Logger(label: "quire")
        var configuration = Daemon.Configuration(serverVersion: Quire.version)
        try peering.configure(&configuration)
        let secretMissing = ValidationError("peering needs a shared secret: set QUIRE_SECRET or pass --secret-file")
        // Without a secret this process can only bridge, and nothing can hold a directory that
        // does not exist: refuse before making one.
        if configuration.peerSecret == nil,
           !(mayBridge && storage.dataDirectoryPath.map { FileManager.default.fileExists(atPath: $0) } == true) {
            throw secretMissing
        }
        let opened = try storage.openStore(logger: logger, joiningHeld: mayBridge)
        if mayBridge, case .heldBy = opened, let directory = storage.dataDirectoryPath {
            let path = EditorSocketLocation(dataDirectory: directory).peerSocketPath
            if let status = joinRunningDaemon(socketPath: path, command: "quire peer --stdio", logger: logger) {
                throw ExitCode(status)
            }
            if storage.dataDir != nil {
                throw ValidationError("the data directory \(directory) is in use by another quire, and this one cannot bridge to its peer socket \(path) (see the warning above)")
            }
        }
        guard configuration.peerSecret != nil else { throw secretMissing }
        var options = DaemonServer.Options(serveStdio: false, socketPath: socket)
        peering.apply(to: &options)
        options.peerStdio = true
        throw ExitCode(try runDaemon(configuration: configuration, options: options, storage: storage, opened: opened))
    }
}
