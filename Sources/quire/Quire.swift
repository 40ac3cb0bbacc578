import ArgumentParser
import Foundation
import Logging
import QuireDaemon
import ReplicatingTypes

/// The `quire` command line: by default (`quire serve`) the daemon, serving one editor on stdio.
@main
struct Quire: ParsableCommand {
    static let version = "0.6.0"

    static let configuration = CommandConfiguration(
        commandName: "quire",
        abstract: "Collaborative text-editing daemon: editors attach over stdio with JSON-RPC 2.0, daemons pair as peers.",
        discussion: "Without a subcommand, `quire` is `quire serve`. The protocols are described in protocol/README.md and protocol/peer.md.",
        version: "\(version) (CRDT format \(ReplicatingTypesInfo.formatVersion), peer protocol \(PeerLink.protocolVersion))",
        subcommands: [Serve.self, ShareCommand.self, JoinCommand.self, InviteCommand.self, MembersCommand.self, RoleCommand.self,
                      RevokeCommand.self, Attach.self, Peer.self, Secret.self, RelayCommand.self],
        defaultSubcommand: Serve.self
    )

    static func main() {
        CoreDumps.forbid()
        main(nil)
    }
}

/// `quire serve` (the default): the daemon, serving the editor that started it on stdio.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the editor on stdin/stdout (the default).",
        discussion: """
        Serves the editor that started it on stdin/stdout (LSP Content-Length frames, or one JSON \
        message per line when the first byte is '{' or '['). Logs go to stderr.
        """
    )

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    @Option(help: "Also accept editors on this Unix socket (they connect with `quire attach PATH`); mode 0600, your user only. Only a stale socket of yours at PATH is replaced; anything else there is an error.")
    var socket: String?

    @Flag(help: "Do not serve stdin/stdout (with --socket: serve the socket only, until killed).")
    var noStdio = false

    @OptionGroup var peering: PeeringOptions

    @OptionGroup var storage: StorageOptions

    @Option(help: "Largest accepted message, in bytes.")
    var maxFrameBytes: Int = 8 << 20

    @Option(help: "Deepest accepted nesting of JSON arrays and objects.")
    var maxNestingDepth: Int = 64

    @Option(help: "Daemon edits carry the text's SHA-256 for documents up to this many characters (hashing is O(n) per edit).")
    var maxHashedCharacters: Int = 1 << 20

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level \(logLevel.debugDescription)")
        }
        guard maxFrameBytes >= 1024 else { throw ValidationError("--max-frame-bytes must be at least 1024") }
        guard (8...2048).contains(maxNestingDepth) else { throw ValidationError("--max-nesting-depth must be between 8 and 2048") }
        if noStdio && socket == nil && peering.listen.isEmpty && peering.connect.isEmpty && peering.connectCommand.isEmpty
            && peering.relay.isEmpty {
            throw ValidationError("--no-stdio needs --socket or peering: there would be nothing to serve")
        }
    }

    func run() throws {
        bootstrapLogging(logLevel)
        var configuration = Daemon.Configuration(hashLimit: maxHashedCharacters, maximumFrameBytes: maxFrameBytes,
                                                 maximumNestingDepth: maxNestingDepth, serverVersion: Quire.version)
        try peering.configure(&configuration)
        var options = DaemonServer.Options(serveStdio: !noStdio, socketPath: socket)
        peering.apply(to: &options)
        throw ExitCode(try runDaemon(configuration: configuration, options: options, storage: storage))
    }
}

/// Logs go to stderr at `level`; stdout belongs to the protocol.
func bootstrapLogging(_ level: String) {
    let level = Logger.Level(rawValue: level) ?? .warning
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}

/// Runs the daemon (or joins the one holding the data directory as an editor's bridge); `opened`
/// is the storage when the caller opened it already (`quire peer --stdio`).
func runDaemon(configuration: Daemon.Configuration, options: DaemonServer.Options, storage: StorageOptions,
               opened: StorageOptions.Storage? = nil) throws -> Int32 {
    let logger = Logger(label: "quire")
    var configuration = configuration
    var options = options
    let store: DocumentStore?
    switch try opened ?? storage.openStore(logger: logger) {
    case .store(let opened):
        store = opened
        // Editors can also reach this daemon in its data directory: a second `quire` started
        // for the same directory becomes one of them (below) rather than a daemon of its own.
        // So can peers: `quire peer --stdio` (over ssh) bridges to its peer socket.
        let location = EditorSocketLocation(dataDirectory: opened.path)
        do {
            try location.prepare()
            options.peerSocketPath = location.peerSocketPath
            if options.socketPath == nil && options.serveStdio && !options.peerStdio {
                options.socketPath = location.socketPath
                options.socketIsOptional = true
            }
        } catch {
            logger.warning("not listening for editors or peers: \(error)")
        }
    case .heldBy(let socketPath):
        if options.serveStdio && !options.peerStdio && options.socketPath == nil
            && options.listen.isEmpty && options.connect.isEmpty && options.connectCommands.isEmpty && options.relays.isEmpty,
           let status = joinRunningDaemon(socketPath: socketPath, command: "quire", logger: logger) {
            return status
        }
        FileHandle.standardError.write(Data("quire: another quire holds the data directory; this one keeps its documents in memory only (pass --data-dir to keep them elsewhere)\n".utf8))
        store = nil
    case .memory:
        store = nil
    }
    if !configuration.userNameIsExplicit { configuration.userName = UserNameFallback.resolve() }
    let daemon = Daemon(configuration: configuration, logger: logger, store: store)
    return try DaemonServer(daemon: daemon, options: options, logger: logger).run()
}

/// Peering flags shared by `quire` and `quire peer`.
struct PeeringOptions: ParsableArguments {
    @Option(name: .customLong("listen"), help: "Accept peers on [host:]port (loopback by default; port 0 picks one). Repeatable.")
    var listen: [String] = []

    @Option(name: .customLong("connect"), help: "Connect to a peer at host:port, reconnecting with backoff. Repeatable.")
    var connect: [String] = []

    @Option(name: .customLong("connect-command"), help: "Run this command and peer over its stdin/stdout, e.g. 'ssh host quire peer --stdio'. Repeatable.")
    var connectCommand: [String] = []

    @Option(name: .customLong("relay"), help: "Dial the relay at host:port (`quire relay`) and peer with the daemon it pairs this one with (same secret), dialing again with backoff. Repeatable.")
    var relay: [String] = []

    @Option(help: "File holding the shared peer secret (or set QUIRE_SECRET). Never given on the command line itself.")
    var secretFile: String?

    @Option(name: .customLong("peer-fingerprint"), help: "Accept only peers whose identity key has this fingerprint (as peer/status shows it). Repeatable.")
    var peerFingerprints: [String] = []

    @Option(help: "Seconds a peer has to finish its handshake before the link is cut.")
    var peerHandshakeTimeout: Double = 10

    @Option(help: "Seconds a reopen after a restart may wait for the --connect peers to catch up on its document (0: answer at once).")
    var reopenCatchUpWait: Double = 2

    @Option(help: "Your name, shown to peers (default: the name your editor gives, else git's user.name, else $USER, else your login name).")
    var userName: String?

    @OptionGroup var quota: PeerQuotaOptions

    func configure(_ configuration: inout Daemon.Configuration) throws {
        // Without --user-name, `runDaemon` works the name out (git, $USER, the login) once it
        // knows it serves as a daemon rather than joining another one as a bridge.
        configuration.userName = userName ?? ""
        configuration.userNameIsExplicit = userName != nil
        for fingerprint in peerFingerprints {
            let digits = PeerIdentity.normalized(fingerprint)
            guard digits.count == 32 else { throw ValidationError("--peer-fingerprint \(fingerprint): a key fingerprint has 32 hex digits, as peer/status shows it") }
            configuration.trustedPeerFingerprints.insert(digits)
        }
        guard peerHandshakeTimeout > 0, peerHandshakeTimeout <= 300 else { throw ValidationError("--peer-handshake-timeout must be between 0 and 300 seconds") }
        configuration.peerHandshakeTimeout = peerHandshakeTimeout
        // The clients give a request 10 s: a reopen must be answered well within that.
        guard reopenCatchUpWait >= 0, reopenCatchUpWait <= 8 else { throw ValidationError("--reopen-catch-up-wait must be between 0 and 8 seconds") }
        configuration.reopenCatchUpWait = reopenCatchUpWait
        try quota.configure(&configuration)
        if let secretFile {
            configuration.peerSecret = try Self.readSecretFile(secretFile)
        } else if let secret = ProcessInfo.processInfo.environment["QUIRE_SECRET"], !secret.isEmpty {
            do {
                configuration.peerSecret = try PeerSecret.material(from: secret, source: "QUIRE_SECRET")
            } catch {
                throw ValidationError(error.description)
            }
        }
        // Nothing this daemon starts (a --connect-command, ssh) inherits the secret.
        unsetenv("QUIRE_SECRET")
        if configuration.peerSecret == nil && !(listen.isEmpty && connect.isEmpty && connectCommand.isEmpty && relay.isEmpty) {
            throw ValidationError("peering needs a shared secret: set QUIRE_SECRET or pass --secret-file")
        }
    }

    /// The secret in `path` (its first line): refused unless the file is the user's own and
    /// closed to group and others, and holds a secret made by `quire secret`.
    static func readSecretFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("cannot read the secret file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw ValidationError("the secret file \(path) is not a regular file")
        }
        guard status.st_uid == geteuid() else {
            throw ValidationError("the secret file \(path) belongs to another user (uid \(status.st_uid)); keep your own copy, mode 0600")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw ValidationError("the secret file \(path) is open to group or others (mode \(String(mode, radix: 8))); "
                + "anyone who reads it can pair with your daemons: run `chmod 600 \(path)`")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        let firstLine = bytes.prefix { $0 != 10 && $0 != 13 }
        guard !firstLine.isEmpty else { throw ValidationError("the secret file \(path) is empty: put the output of `quire secret` in it") }
        do {
            return try PeerSecret.material(from: String(decoding: firstLine, as: UTF8.self), source: "the secret file \(path)")
        } catch {
            throw ValidationError(error.description)
        }
    }

    func apply(to options: inout DaemonServer.Options) {
        options.listen = listen
        options.connect = connect
        options.connectCommands = connectCommand
        options.relays = relay
    }
}

/// Where documents are kept across restarts, shared by `quire` and `quire peer`.
struct StorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Keep documents here across restarts (created with mode 0700).",
                               discussion: "Default: $XDG_DATA_HOME/quire, or ~/.local/share/quire."))
    var dataDir: String?

    @Flag(help: "Keep documents in memory only: nothing survives the daemon.")
    var ephemeral = false

    @Option(help: "sync: an edit is on disk before anyone hears of it; batch: written at once (safe from kill -9), synced every 200 ms.")
    var durability: String = DocumentStore.Durability.sync.rawValue

    @Option(help: "Fold a document's log into a snapshot once the log exceeds this many bytes (and the last snapshot's size).")
    var snapshotLogBytes: Int = 1 << 20

    func validate() throws {
        guard DocumentStore.Durability(rawValue: durability) != nil else {
            throw ValidationError("--durability must be sync or batch, not \(durability.debugDescription)")
        }
        if ephemeral && dataDir != nil { throw ValidationError("--ephemeral and --data-dir exclude each other") }
        guard snapshotLogBytes >= 1024 else { throw ValidationError("--snapshot-log-bytes must be at least 1024") }
    }

    static var defaultDataDir: String? {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/quire" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/quire" }
        return nil
    }

    /// What to keep documents in.
    enum Storage {
        case store(DocumentStore)
        /// The default data directory is held by a running daemon, which takes editors here.
        case heldBy(editorSocket: String)
        case memory
    }

    /// The data directory `openStore` uses: nil with --ephemeral or without HOME.
    var dataDirectoryPath: String? { ephemeral ? nil : dataDir ?? Self.defaultDataDir }

    /// The data directory asked for. A directory named with --data-dir that cannot be used is an
    /// error (held by another daemon too, unless `joiningHeld`: then it is `heldBy`). When the
    /// default one is held by another daemon, the caller joins that daemon as one of its
    /// editors; when it cannot be used otherwise, documents are kept in memory.
    func openStore(logger: Logger, joiningHeld: Bool = false) throws -> Storage {
        guard !ephemeral else { return .memory }
        let mode = DocumentStore.Durability(rawValue: durability) ?? .sync
        if let dataDir {
            do { return .store(try DocumentStore(path: dataDir, durability: mode, snapshotLogBytes: snapshotLogBytes, logger: logger)) } catch {
                if joiningHeld, let error = error as? StorageError, error.isLockHeld {
                    logger.info("\(error); joining it")
                    return .heldBy(editorSocket: EditorSocketLocation(dataDirectory: dataDir).socketPath)
                }
                throw ValidationError("\(error)")
            }
        }
        guard let path = Self.defaultDataDir else {
            logger.warning("no HOME or XDG_DATA_HOME: documents are kept in memory only")
            return .memory
        }
        do { return .store(try DocumentStore(path: path, durability: mode, snapshotLogBytes: snapshotLogBytes, logger: logger)) } catch {
            if error is UntrustedFileError {
                // Not silently kept in memory instead: the user must hear of it and fix it.
                throw ValidationError("\(error)")
            }
            if let error = error as? StorageError, error.isLockHeld {
                logger.info("\(error); joining it as an editor")
                return .heldBy(editorSocket: EditorSocketLocation(dataDirectory: path).socketPath)
            }
            FileHandle.standardError.write(Data("quire: \(error); documents are kept in memory only (pass --data-dir to keep them elsewhere)\n".utf8))
            return .memory
        }
    }
}

/// `quire secret`: prints a new peer secret (240 random bits from the system's generator).
struct Secret: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a new shared peer secret.",
        discussion: """
        Give the same secret to every daemon you pair, in QUIRE_SECRET or in a --secret-file of \
        mode 0600: `quire secret > ~/.config/quire/secret && chmod 600 ~/.config/quire/secret`. \
        Daemons take only secrets made this way.
        """
    )

    func run() throws {
        print(PeerSecret.generate())
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
