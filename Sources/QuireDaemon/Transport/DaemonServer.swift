// Transport/: bytes from stdio, the Unix socket, TCP and pipes (SwiftNIO) into editor
// connections and peer links. May call: the `Daemon` (the composition root), `EditorConnection`,
// `PeerLink` and `PeerChannelHandler`; nothing below calls it but through `PeerTransport`.
import Foundation
import Logging
import QuireProtocol
import NIOCore
import NIOPosix

/// Runs a `Daemon` on one event loop: an editor on stdio (the protocol gets a private copy of
/// fd 1, and fd 1 is pointed at stderr so a stray print cannot corrupt the stream) and, when
/// asked, more editors on a Unix socket.
public final class DaemonServer {
    public struct Options: Sendable {
        public var serveStdio = true
        public var socketPath: String?
        /// When binding `socketPath` fails, log it and serve without the socket (the socket the
        /// daemon opens on its own in its data directory) instead of failing.
        public var socketIsOptional = false
        /// SIGTERM, SIGINT and SIGHUP stop `run()`; false when the process takes them itself and
        /// calls `stop()` (`quire share` tells the daemon to stop sharing first).
        public var takesStopSignals = true
        /// `[host:]port` to accept peers on (port 0 picks one and logs it).
        public var listen: [String] = []
        /// `host:port` peers to connect to (reconnecting with backoff).
        public var connect: [String] = []
        /// `host:port` relays to dial and be paired through (`protocol/relay.md`).
        public var relays: [String] = []
        /// Commands to run and peer over (`ssh host quire peer --stdio`).
        public var connectCommands: [String] = []
        /// Speak the peer protocol on stdin/stdout instead of serving an editor there.
        public var peerStdio = false
        /// Also accept peer links on this Unix socket (`PeerSocketServer`: the data directory's
        /// peer socket, which `quire peer --stdio` bridges to); when it cannot be bound, the
        /// daemon logs it and serves without.
        public var peerSocketPath: String?
        /// The only user whose processes may attach on `socketPath` (checked with `SO_PEERCRED`).
        var editorUID: uid_t = getuid()
        public init(serveStdio: Bool = true, socketPath: String? = nil) {
            self.serveStdio = serveStdio
            self.socketPath = socketPath
        }
    }

    private let group: MultiThreadedEventLoopGroup
    private let daemon: Daemon
    private let options: Options
    private let logger: Logger
    /// While `run()` serves: ends it as a stop signal does. Used only on the event loop.
    private var stopServing: (() -> Void)?
    private var stopRequested = false

    /// Ends `run()` as a stop signal would (peers get a goodbye, the editor socket goes); from any
    /// thread, before or while `run()` serves.
    public func stop() {
        group.next().execute {
            self.stopRequested = true
            self.stopServing?()
        }
    }

    /// SIGTERM, SIGINT and SIGHUP.
    static func stopSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        return set
    }

    public init(daemon: Daemon, options: Options, logger: Logger) {
        // The stop signals are blocked in every thread (threads inherit the mask, so before any
        // starts) and taken by one thread with sigwait: reliable whatever mask or disposition
        // the parent left us.
        var blocked = Self.stopSignals()
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.daemon = daemon
        self.options = options
        self.logger = logger
    }

    /// Serves until the stdio editor exits (or forever with only a socket); returns the exit status.
    public func run() throws -> Int32 {
        let loop = group.next()
        let exitPromise = loop.makePromise(of: Int32.self)
        let exitStatus = ExitLatch(exitPromise)
        let daemon = self.daemon
        let network = PeerNetwork(daemon: daemon, group: group, logger: logger)
        // SIGTERM, SIGINT and SIGHUP end the daemon cleanly: peers get a goodbye, the socket goes.
        let logger = self.logger
        if options.takesStopSignals {
            Thread {
                var signals = DaemonServer.stopSignals()
                var number: Int32 = 0
                guard sigwait(&signals, &number) == 0 else { return }
                logger.info("signal \(number): shutting down")
                loop.execute { exitStatus.finish(0) }
            }.start()
        }
        loop.execute {
            self.stopServing = { exitStatus.finish(0) }
            if self.stopRequested { exitStatus.finish(0) }
        }
        try loop.submit { daemon.transport = network }.wait()
        if daemon.store?.durability == .batch {
            let interval = TimeAmount.nanoseconds(Int64(DocumentStore.batchInterval * 1e9))
            loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in daemon.syncStorage() }
        }
        try startPeering(network, on: loop)
        var editorSocket: EditorSocket?
        if let path = options.socketPath {
            do {
                editorSocket = try EditorSocketServer.listen(path: path, group: group, ownUID: options.editorUID, logger: logger) { channel in
                    try channel.pipeline.syncOperations.addHandler(EditorChannelHandler(
                        makeConnection: { write in
                            let connection = EditorConnection(daemon: daemon, write: write)
                            connection.session.onExit = { _ in channel.close(promise: nil) }
                            return connection
                        },
                        onClose: { _ in }))
                }
                logger.info("listening for editors on \(path)")
            } catch where options.socketIsOptional {
                logger.warning("not listening for editors on \(path): \(error)")
            }
        }
        var peerSocket: EditorSocket?
        if let path = options.peerSocketPath {
            do {
                peerSocket = try PeerSocketServer.listen(path: path, network: network, group: group, ownUID: options.editorUID, logger: logger)
                logger.info("accepting peer links on \(path)")
            } catch {
                logger.warning("not accepting peer links on \(path): \(error)")
            }
        }
        if options.peerStdio {
            guard Descriptors.isPollable(0), Descriptors.isPollable(1) else {
                throw PeerNetworkError("quire peer --stdio needs pipes or sockets on stdin and stdout (as ssh gives it)")
            }
            let output = dup(1)
            dup2(2, 1)
            try loop.submit { network.serveStdio(input: 0, output: output) { exitStatus.finish(0) } }.wait()
        } else if options.serveStdio {
            let protocolOutput = dup(1)
            dup2(2, 1)
            if !Descriptors.isPollable(0) || !Descriptors.isPollable(protocolOutput) {
                // `quire < file`, `quire > file`, `/dev/null`: NIO's pipe channel cannot take them.
                serveFiles(input: 0, output: protocolOutput, on: loop, exitStatus: exitStatus)
            } else {
                try servePipes(input: 0, output: protocolOutput, exitStatus: exitStatus)
            }
        }
        let status = try exitPromise.futureResult.wait()
        try? loop.submit {
            daemon.finishDiskPasses()   // a pass's hop back would find the loop gone
            daemon.syncStorage()
            network.shutdown()
            daemon.syncStorage()
        }.wait()
        try? group.syncShutdownGracefully()
        editorSocket?.removeIfStillOurs()
        peerSocket?.removeIfStillOurs()
        return status
    }

    /// The peering asked for on the command line. Listening ports are logged at info level and
    /// printed to stderr, so `--listen 0` tells which port it got.
    private func startPeering(_ network: PeerNetwork, on loop: EventLoop) throws {
        for spec in options.listen {
            let (host, port) = try Self.hostAndPort(spec, defaultHost: "127.0.0.1")
            let bound = try loop.submit { try network.listen(host: host, port: port) }.wait()
            FileHandle.standardError.write(Data("quire: listening for peers on \(host):\(bound)\n".utf8))
        }
        for spec in options.connect {
            let (host, port) = try Self.hostAndPort(spec, defaultHost: nil)
            try loop.submit { try network.connect(host: host, port: port, fingerprint: nil) }.wait()
        }
        for spec in options.relays {
            let (host, port) = try Self.hostAndPort(spec, defaultHost: nil)
            try loop.submit { try network.connect(relayHost: host, port: port, fingerprint: nil) }.wait()
        }
        for command in options.connectCommands {
            try loop.submit { try network.connect(command: command, fingerprint: nil) }.wait()
        }
        // Reopens wait (bounded) for these peers' first catch-up (`ReopenWaits`).
        let peers = options.connect.count + options.connectCommands.count
        try loop.submit {
            // A disk pass written off the loop comes back with `execute` (from its own thread).
            self.daemon.waitForPeersBeforeReopens(configuredPeers: peers, schedule: { seconds, work in
                loop.scheduleTask(in: .nanoseconds(Int64(max(0, seconds) * 1e9))) { work() }
            }, onLoop: { work in loop.execute { work() } })
        }.wait()
    }

    /// Parses `host:port`, `[v6]:port` or, with a default host, `port`.
    static func hostAndPort(_ spec: String, defaultHost: String?) throws -> (String, Int) {
        var host = defaultHost
        var portText = spec
        if let colon = spec.lastIndex(of: ":") {
            host = String(spec[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            portText = String(spec[spec.index(after: colon)...])
        }
        let shown = DisplayText.clean(spec, limit: 80)
        guard let host, !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw PeerNetworkError("\"\(shown)\" is not \(defaultHost == nil ? "host:port" : "[host:]port")")
        }
        // As an editor's peer/connect and peer/listen: the host is logged, retried and shown.
        guard host.utf8.count <= 255, ParamsReader.isPrintableHost(host) else {
            throw PeerNetworkError("\"\(shown)\": a host has 1 to 255 bytes with no spaces or control characters")
        }
        return (host, port)
    }

    private func servePipes(input: Int32, output protocolOutput: Int32, exitStatus: ExitLatch) throws {
        let daemon = self.daemon
        do {
            let channel = try NIOPipeBootstrap(group: group)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(EditorChannelHandler(
                            makeConnection: { write in
                                let connection = EditorConnection(daemon: daemon, write: write)
                                connection.session.onExit = { status in
                                    channel.close(promise: nil)
                                    exitStatus.finish(status)
                                }
                                return connection
                            },
                            onClose: { connection in
                                // End of input without exit: as in LSP, status 1 unless shut down.
                                exitStatus.finish(connection.session.state == .shutDown ? 0 : 1)
                            }))
                    }
                }
                .takingOwnershipOfDescriptors(input: input, output: protocolOutput).wait()
            _ = channel
        }
    }

    /// Reads `input` on a thread of its own and hands the bytes to the loop; writes replies
    /// straight to `output`. Used when stdin or stdout is a regular file or a device.
    private func serveFiles(input: Int32, output: Int32, on loop: EventLoop, exitStatus: ExitLatch) {
        let daemon = self.daemon
        let connection = try? loop.submit {
            // A reader that went away is the end of input's business, not a write's.
            let connection = EditorConnection(daemon: daemon) { bytes in try? FileSystem.writeAll(bytes, to: output, path: "standard output") }
            connection.session.onExit = { status in exitStatus.finish(status) }
            return NIOLoopBound(connection, eventLoop: loop)
        }.wait()
        guard let bound = connection else { exitStatus.finish(1); return }
        let thread = Thread {
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                let bytes = Array(chunk[0..<n])
                loop.execute { bound.value.receive(bytes) }
            }
            loop.execute {
                bound.value.endOfInput()
                exitStatus.finish(bound.value.session.state == .shutDown ? 0 : 1)
            }
        }
        thread.start()
    }
}

/// The daemon's exit status, settled once: by the editor's `exit`, or by the end of its input.
/// Used only on the daemon's event loop.
final class ExitLatch: @unchecked Sendable {
    private let promise: EventLoopPromise<Int32>
    private var settled = false

    init(_ promise: EventLoopPromise<Int32>) {
        self.promise = promise
    }

    func finish(_ status: Int32) {
        guard !settled else { return }
        settled = true
        promise.succeed(status)
    }
}
