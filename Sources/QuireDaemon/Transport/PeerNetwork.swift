import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix

/// The daemon's peer links over SwiftNIO: TCP listeners, outgoing TCP links that reconnect with
/// backoff, links over a command's stdin/stdout, and the heartbeat timer. Lives on the daemon's
/// event loop; every daemon call happens there.
final class PeerNetwork: PeerTransport, @unchecked Sendable {
    let daemon: Daemon
    let loop: EventLoop
    private let group: EventLoopGroup
    let logger: Logger
    private var listeners: [Int: Channel] = [:]
    /// The relay dialers (`PeerNetwork+Relay`).
    var relays: [RelayDialer] = []
    /// The outgoing TCP connections that reconnect, each until stopped.
    private var dials: [Dial] = []
    private var heartbeat: RepeatedTask?
    private let heartbeatInterval: Double
    private var stopping = false
    /// Host lookups answer only while the loop runs (`GatedResolver`); closed by `shutdown()`.
    let resolverGate = ResolverGate()

    init(daemon: Daemon, group: EventLoopGroup, logger: Logger, heartbeatInterval: Double = 5) {
        self.daemon = daemon
        self.group = group
        self.loop = group.next()
        self.logger = logger
        self.heartbeatInterval = heartbeatInterval
        let start = DispatchTime.now().uptimeNanoseconds
        heartbeat = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .milliseconds(Int64(heartbeatInterval * 1000))) { [daemon] _ in
            daemon.tickPeers(now: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, interval: heartbeatInterval)
        }
    }

    var listeningPorts: [Int] { listeners.keys.sorted() }

    /// `accepts`: on a link through a relay, the role the relay gave; the link is one this daemon
    /// started, so it is not counted against the incoming handshake slots.
    /// `scope`: the secret the link speaks with (nil on an incoming link: every secret held);
    /// `secret`: exactly this one of `scope`'s (an owner's invitation, through a relay).
    func handler(address: String, incoming: Bool, accepts: Bool? = nil, remoteHost: String? = nil, fingerprint: String? = nil,
                 scope: DocumentScope? = nil, secret: [UInt8]? = nil,
                 onClose: ((_ reason: String, _ wasEstablished: Bool) -> Void)? = nil) -> PeerChannelHandler {
        PeerChannelHandler { [daemon, logger] channel in
            do {
                let output = PeerOutput(channel: channel)
                let link = try daemon.makePeerLink(write: { output.write($0) }, close: { channel.close(promise: nil) },
                                                    incoming: incoming, accepts: accepts, remoteHost: remoteHost, scope: scope,
                                                    secret: secret)
                // Paced: catch-up goes out as the peer reads, and a peer that stops reading is cut.
                link.paceOutput(later: { output.later($0) })
                output.onTaken = { [weak link] count in link?.outputTaken(count) }
                link.address = address
                link.expectedFingerprint = fingerprint
                link.onClose = { [weak link] reason in onClose?(reason, link?.wasEstablished ?? false) }
                return link
            } catch {
                // Refusals for the handshake rate are logged by the daemon, once per interval.
                if (error as? PeeringError)?.isRateRefusal != true { logger.warning("peer link refused: \(error)") }
                return nil
            }
        }
    }

    /// Binds synchronously (so the reply can name the port, without waiting on the event loop),
    /// then hands the socket to NIO.
    func listen(host: String, port: Int) throws -> Int {
        try listen(host: host, port: port, scope: nil)
    }

    func listen(host: String, port: Int, scope: DocumentScope?) throws -> Int {
        let (socket, bound) = try Self.bindListeningSocket(host: host, port: port)
        ServerBootstrap(group: loop)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                let remote = channel.remoteAddress.map(Self.shown) ?? "?"
                return channel.pipeline.addHandler(handler(address: "tcp from \(remote)", incoming: true,
                                                           remoteHost: channel.remoteAddress?.ipAddress ?? remote, scope: scope))
            }
            .withBoundSocket(socket)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel): listeners[bound] = channel
                case .failure(let error): logger.error("cannot listen on \(host):\(bound): \(error)")
                }
            }
        logger.info("listening for peers on \(host):\(bound)\(scope.map { " (\($0) only)" } ?? "")")
        return bound
    }

    /// `address` as people read it: `127.0.0.1:55992`, `[::1]:55992` (SwiftNIO's own
    /// description repeats the host: `[IPv4]127.0.0.1/127.0.0.1:55992`).
    static func shown(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    /// A TCP socket bound to `host` (IPv4 or IPv6 literal, or `localhost`) and listening.
    static func bindListeningSocket(host: String, port: Int) throws -> (NIOBSDSocket.Handle, Int) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        let isV4 = inet_pton(AF_INET, name, &v4.sin_addr) == 1
        let isV6 = !isV4 && inet_pton(AF_INET6, name, &v6.sin6_addr) == 1
        guard isV4 || isV6 else { throw PeerNetworkError("\(host) is not an IP address (use 127.0.0.1, ::1, 0.0.0.0 or localhost)") }
        let fd = socket(isV4 ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PeerNetworkError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if isV4 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            bound = withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        } else {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            bound = withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
        guard bound == 0, Glibc.listen(fd, 128) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            throw PeerNetworkError("cannot listen on \(host):\(port): \(why)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let actual = withUnsafePointer(to: &storage) { pointer -> Int in
            isV4 ? Int(UInt16(bigEndian: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }))
                 : Int(UInt16(bigEndian: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }))
        }
        return (fd, actual)
    }

    func stopListening(port: Int) -> Bool {
        guard let channel = listeners.removeValue(forKey: port) else { return false }
        channel.close(promise: nil)
        return true
    }

    func connect(host: String, port: Int, fingerprint: String?) throws {
        try connect(host: host, port: port, fingerprint: fingerprint, scope: .general)
    }

    func connect(host: String, port: Int, fingerprint: String?, scope: DocumentScope) throws {
        try connect(addresses: [(host, port)], fingerprint: fingerprint, scope: scope)
    }

    func connect(addresses: [(host: String, port: Int)], fingerprint: String?, scope: DocumentScope) throws {
        guard !addresses.isEmpty else { return }
        try requireSecret(of: scope)
        let dial = Dial(scope: scope)
        dials.append(dial)
        connect(addresses: addresses, index: 0, fingerprint: fingerprint, dial: dial, attempt: 0)
    }

    /// A project's secret must be held to dial with it (the general one is checked as each link
    /// is made, as before).
    private func requireSecret(of scope: DocumentScope) throws {
        guard scope == .general || daemon.holdsPeerSecret(of: scope) else { throw PeeringError.noSecretOf(scope) }
    }

    /// Connects to `addresses[index]`; a connection that fails, or a link that ends before it was
    /// established, tries the next address at once. After the last one, or once an established
    /// link drops, it starts again from the first with exponential backoff from 0.5 s up to 30 s
    /// (a link that got established resets it). Stops once `dial` is stopped
    /// (`disconnect(scope:)`, shutdown), or when the last address refused our secret or version.
    private func connect(addresses: [(host: String, port: Int)], index: Int, fingerprint: String?, dial: Dial, attempt: Int) {
        guard !stopping, !dial.stopped else { return }
        let (host, port) = addresses[index]
        let retry: (String, Bool) -> Void = { [weak self] reason, wasEstablished in
            guard let self else { return }
            guard !self.stopping, !dial.stopped, !reason.contains("disconnected by an editor") else {
                self.dials.removeAll { $0 === dial }   // this dial is over
                return
            }
            if !wasEstablished, index + 1 < addresses.count {
                self.logger.info("peer \(host):\(port): \(reason); trying \(addresses[index + 1].host):\(addresses[index + 1].port)")
                self.loop.execute {
                    self.connect(addresses: addresses, index: index + 1, fingerprint: fingerprint, dial: dial, attempt: attempt)
                }
                return
            }
            guard !reason.contains("authentication failed"), !reason.contains("version mismatch") else {
                self.dials.removeAll { $0 === dial }
                return
            }
            let next = wasEstablished ? 0 : attempt + 1
            let delay = min(30.0, 0.5 * pow(2.0, Double(min(next, 6))))
            self.logger.info("peer \(host):\(port): reconnecting in \(delay) s (\(reason))")
            self.loop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) {
                self.connect(addresses: addresses, index: 0, fingerprint: fingerprint, dial: dial, attempt: next)
            }
        }
        ClientBootstrap(group: loop)
            .resolver(GatedResolver(loop: loop, gate: resolverGate))
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connectTimeout(.seconds(10))
            .channelInitializer { [self] channel in
                channel.pipeline.addHandler(handler(address: "tcp to \(host):\(port)", incoming: false, fingerprint: fingerprint, scope: dial.scope,
                                                    onClose: retry))
            }
            .connect(host: host, port: port)
            .whenFailure { error in retry("cannot connect: \(error)", false) }
    }

    func connect(command: String, fingerprint: String?) throws {
        try connect(command: command, fingerprint: fingerprint, scope: .general)
    }

    func connect(command: String, fingerprint: String?, scope: DocumentScope) throws {
        try requireSecret(of: scope)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        // The secret stays in this process: the command (ssh, a relay) has no business with it.
        var environment = ProcessInfo.processInfo.environment
        environment["QUIRE_SECRET"] = nil
        process.environment = environment
        let toChild = Pipe(), fromChild = Pipe()
        process.standardInput = toChild
        process.standardOutput = fromChild
        try process.run()
        let input = dup(fromChild.fileHandleForReading.fileDescriptor)
        let output = dup(toChild.fileHandleForWriting.fileDescriptor)
        try? fromChild.fileHandleForReading.close()
        try? toChild.fileHandleForWriting.close()
        NIOPipeBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { [self] channel in
                channel.pipeline.addHandler(handler(address: "command \(command)", incoming: false, fingerprint: fingerprint, scope: scope,
                                                    onClose: { _, _ in
                    if process.isRunning { process.terminate() }
                }))
            }
            .takingOwnershipOfDescriptors(input: input, output: output)
            .whenFailure { [logger] error in logger.error("cannot peer over \(command): \(error)") }
        logger.info("peering over the stdio of: \(command)")
    }

    /// Stops the dialers and relay dialers of `scope`, then closes every link of that scope.
    func disconnect(scope: DocumentScope) {
        for dial in dials where dial.scope == scope { dial.stopped = true }
        dials.removeAll { $0.stopped }
        let stopped = relays.filter { $0.scope == scope }
        for relay in stopped { relay.stopDialing() }
        relays.removeAll { $0.scope == scope }
        daemon.closePeerLinks(of: scope, reason: "no longer shared: \(scope) was disconnected")
        for relay in stopped { relay.stop() }
    }

    /// Peers over this process's own stdin/stdout (`quire peer --stdio`): the accepting side of
    /// the link, as whoever ran the command connected to it.
    func serveStdio(input: Int32, output: Int32, onEnd: @escaping () -> Void) {
        NIOPipeBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { [self] channel in
                channel.pipeline.addHandler(handler(address: "stdio", incoming: true, onClose: { _, _ in onEnd() }))
            }
            .takingOwnershipOfDescriptors(input: input, output: output)
            .whenFailure { [logger] error in
                logger.error("cannot peer over stdin/stdout: \(error)")
                onEnd()
            }
    }

    func shutdown() {
        stopping = true
        // Before the loop shuts down: a lookup answering later must not reach it.
        resolverGate.close()
        heartbeat?.cancel()
        for dial in dials { dial.stopped = true }
        for relay in relays { relay.stopDialing() }
        for channel in listeners.values { channel.close(promise: nil) }
        listeners.removeAll()
        daemon.closeAllPeers()
        // After the goodbyes went out on relayed links; a connection still waiting is closed.
        for relay in relays { relay.stop() }
        relays.removeAll()
    }
}

/// One outgoing connection that reconnects (`PeerNetwork.connect`), with the scope of its secret.
private final class Dial {
    let scope: DocumentScope
    var stopped = false
    init(scope: DocumentScope) { self.scope = scope }
}

/// A peer listener, connection or bridge that could not be set up (a setting, not a passing
/// condition: retrying does not help).
public struct PeerNetworkError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
