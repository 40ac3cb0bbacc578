import Logging
import NIOCore
import NIOPosix

/// A relay for daemons that cannot reach each other (both behind NAT): each dials it and names a
/// rendezvous value; it pairs the two connections that name the same value and forwards bytes
/// both ways, nothing else (`protocol/relay.md`).
///
/// Guarantees:
/// 1. It holds no secret and parses nothing after the reply: the peer protocol runs end to end
///    through it, sealed, so it can neither read nor change what it forwards (a changed byte
///    fails the receiving daemon's integrity check and cuts the link).
/// 2. The first connection to name a value is told to accept in the peer handshake, the second
///    to connect; a third waits for the next.
/// 3. Every connection is bounded (`RelayLimits`): connections in all and unpaired ones per
///    address, preamble size and time, waiting time, idle time, bytes per second. A connection
///    that breaks a bound, or sends anything but a preamble before it is paired, is closed
///    without affecting any other.
/// 4. What it logs (stderr, through swift-log) is addresses, pair numbers and reasons of its
///    own; never a byte a connection sent, nor a rendezvous value.
///
/// Runs on one event loop of its own; all state is used there only.
public final class RelayServer: @unchecked Sendable {
    public let limits: RelayLimits
    let logger: Logger
    private let group: MultiThreadedEventLoopGroup
    let loop: EventLoop
    private var listener: Channel?
    private var sweep: RepeatedTask?

    // State, on `loop` only.
    private var connectionCount = 0
    private var unpairedByAddress: [String: Int] = [:]
    private var waiting: [[UInt8]: RelayConnection] = [:]
    private var pairCount = 0
    private var eventLog = EventLog()

    public init(limits: RelayLimits = RelayLimits(), logger: Logger) throws(RelayError) {
        try limits.validate()
        self.limits = limits
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// Starts accepting daemons on `host` (an IP address or a name) and `port` (0 picks one);
    /// returns the port bound.
    public func listen(host: String, port: Int) throws -> Int {
        guard (0...65535).contains(port) else { throw RelayError("\(port) is not a TCP port") }
        let channel: Channel
        do {
            channel = try ServerBootstrap(group: loop)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.autoRead, value: false)
                // One read takes at most a second's worth, in one go, so a connection overdraws its
                // rate by one read at most (and then waits that much longer).
                .childChannelOption(.maxMessagesPerRead, value: 1)
                .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(
                    minimum: 64, initial: 2048, maximum: min(1 << 16, limits.bytesPerSecond)))
                .childChannelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture {
                        let remote = channel.remoteAddress
                        let host = remote?.ipAddress ?? "?"
                        let label = remote.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
                        try channel.pipeline.syncOperations.addHandler(RelayConnection(server: self, host: host, label: label))
                    }
                }
                .bind(host: host, port: port).wait()
        } catch {
            throw RelayError("cannot listen on \(host):\(port): \(error)")
        }
        listener = channel
        sweep = loop.scheduleRepeatedTask(initialDelay: .seconds(10), delay: .seconds(10)) { [self] _ in
            eventLog.summarize(logger)
        }
        let bound = channel.localAddress?.port ?? port
        logger.info("relay listening on \(host):\(bound)")
        return bound
    }

    /// Closes the listener and every connection.
    public func shutdown() {
        sweep?.cancel()
        try? listener?.close().wait()
        try? group.syncShutdownGracefully()
    }

    // MARK: Connections (called by `RelayConnection`, on `loop`)

    /// Counts a new connection in, or says why it is refused.
    func admit(_ connection: RelayConnection) -> String? {
        guard connectionCount < limits.maximumConnections else {
            return "the relay holds \(connectionCount) connections, its limit"
        }
        let unpaired = unpairedByAddress[connection.host, default: 0]
        guard unpaired < limits.maximumUnpairedPerAddress else {
            return "\(unpaired) unpaired connections from \(connection.host) already, its limit"
        }
        connectionCount += 1
        unpairedByAddress[connection.host] = unpaired + 1
        connection.isCounted = true
        connection.isUnpaired = true
        return nil
    }

    /// A connection sent a whole preamble: pairs it with the one waiting on the same value, or
    /// makes it the one waiting.
    func arrive(_ connection: RelayConnection, rendezvous: [UInt8]) {
        if let partner = waiting.removeValue(forKey: rendezvous), partner.isWaiting {
            unpair(partner)
            unpair(connection)
            pairCount += 1
            note("pair \(pairCount): \(partner.label) accepts, \(connection.label) connects", kind: "paired")
            partner.pair(with: connection, status: .accept, number: pairCount)
            connection.pair(with: partner, status: .connect, number: pairCount)
        } else {
            waiting[rendezvous] = connection
            connection.startWaiting(rendezvous)
        }
    }

    /// A connection closed: it is counted out and forgotten.
    func leave(_ connection: RelayConnection) {
        if case .waiting(let rendezvous) = connection.state, waiting[rendezvous] === connection {
            waiting[rendezvous] = nil
        }
        unpair(connection)
        if connection.isCounted {
            connection.isCounted = false
            connectionCount -= 1
        }
    }

    func stopWaiting(_ connection: RelayConnection, rendezvous: [UInt8]) {
        if waiting[rendezvous] === connection { waiting[rendezvous] = nil }
    }

    private func unpair(_ connection: RelayConnection) {
        guard connection.isUnpaired else { return }
        connection.isUnpaired = false
        let left = unpairedByAddress[connection.host, default: 1] - 1
        unpairedByAddress[connection.host] = left > 0 ? left : nil
    }

    /// Logs a line about one connection (paired, expired, dropped): the first 20 of each 10
    /// seconds one by one, the rest counted by kind in one line when the 10 seconds are over, so a
    /// flood of connections cannot flood the log.
    func note(_ line: String, kind: String) {
        eventLog.note(logger, line, kind: kind)
    }

    func dropped(_ connection: RelayConnection, kind: String, reason: String) {
        note("dropped \(connection.label): \(reason)", kind: kind)
    }
}

/// The relay's log of connections, bounded per 10 seconds.
private struct EventLog {
    private var logged = 0
    private var suppressed: [String: Int] = [:]

    mutating func note(_ logger: Logger, _ line: String, kind: String) {
        if logged < 20 {
            logged += 1
            logger.info("\(line)")
        } else {
            suppressed[kind, default: 0] += 1
        }
    }

    mutating func summarize(_ logger: Logger) {
        if !suppressed.isEmpty {
            let total = suppressed.values.reduce(0, +)
            let kinds = suppressed.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
            logger.info("\(total) more connection events within 10 seconds: \(kinds)")
        }
        logged = 0
        suppressed.removeAll()
    }
}
