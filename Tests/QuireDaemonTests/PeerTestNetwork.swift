import EditingTraces
import Foundation
import Logging
@testable import QuireDaemon
import ReplicatingTypes

/// Daemons linked by in-memory byte streams. Bytes are queued, not delivered at once, so a test
/// decides when the network carries them (`pump`), and can cut a link in the middle.
final class PeerTestNetwork {
    final class Wire {
        var aToB: [[UInt8]] = []
        var bToA: [[UInt8]] = []
        var a: PeerLink?
        var b: PeerLink?
        var open = true
        /// A paced wire: what a side wrote counts as waiting for the other until it is carried
        /// (as a transport reports what the kernel took), and what the links ask to run on a
        /// later turn runs at the next `pump` or `carry`.
        var paced = false
        var later: [() -> Void] = []
        /// The largest single write either side made.
        var largestWrite = 0
    }

    private(set) var wires: [Wire] = []
    private var seed: UInt64 = 0

    /// The secret the test daemons share (made by `quire secret`).
    static let secret = "quire-yacwwfliafoycmbfruzu47sc2v6f4b5cxzfw4mpewzqaoxgidylgugn5"

    /// A daemon with its own replica IDs (`base` + n), the given secret (as `quire secret` prints
    /// it) and, if given, a store.
    /// `log`: keeps the daemon's log lines (info and above) for assertions.
    func makeDaemon(_ base: UInt64, secret: String? = PeerTestNetwork.secret, user: String = "peer", store: DocumentStore? = nil,
                    log: LogCapture? = nil, configure: (inout Daemon.Configuration) -> Void = { _ in }) -> Daemon {
        var next = base
        var random = SeededRandom(seed: base)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        if let log { logger = log.logger }
        var configuration = Daemon.Configuration(peerSecret: secret.map { try! PeerSecret.material(from: $0) }, userName: user)
        configure(&configuration)
        return Daemon(configuration: configuration, logger: logger,
                      replicaSource: { next += 1; return ReplicaID(next) },
                      randomBytes: { n in (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) } }, store: store)
    }

    /// Links two daemons and starts both handshakes: `a` connects, `b` accepts.
    @discardableResult
    /// `host`: the address `b` sees the connection come from (for its handshake slots).
    /// `paced`: see `Wire.paced`. `scope`: the secret `a` dials with (the general one when nil).
    func link(_ a: Daemon, _ b: Daemon, host: String? = nil, paced: Bool = false, scope: DocumentScope? = nil) throws -> Wire {
        let wire = Wire()
        wire.a = try a.makePeerLink(write: { [weak wire] bytes in
            guard let wire, wire.open else { return }
            wire.aToB.append(bytes)
            wire.largestWrite = max(wire.largestWrite, bytes.count)
        }, close: { [weak wire] in wire?.open = false }, incoming: false, scope: scope)
        wire.b = try b.makePeerLink(write: { [weak wire] bytes in
            guard let wire, wire.open else { return }
            wire.bToA.append(bytes)
            wire.largestWrite = max(wire.largestWrite, bytes.count)
        }, close: { [weak wire] in wire?.open = false }, remoteHost: host)
        if paced {
            wire.paced = true
            for link in [wire.a, wire.b] { link?.paceOutput(later: { [weak wire] in wire?.later.append($0) }) }
        }
        wires.append(wire)
        wire.a?.start()
        wire.b?.start()
        return wire
    }

    /// Carries queued bytes until nothing moves; flushes daemon edits to editors as it goes.
    func pump(_ daemons: [Daemon], limit: Int = 10_000) {
        for _ in 0..<limit {
            var moved = false
            for wire in wires {
                if !wire.aToB.isEmpty { let chunk = wire.aToB.removeFirst(); wire.b?.receive(chunk); taken(chunk.count, from: wire.a, on: wire); moved = true }
                if !wire.bToA.isEmpty { let chunk = wire.bToA.removeFirst(); wire.a?.receive(chunk); taken(chunk.count, from: wire.b, on: wire); moved = true }
                if runLater(wire) { moved = true }
            }
            // As the transport does after each read: release output held for the store's commit.
            for daemon in daemons { daemon.flush(); daemon.commit() }
            if !moved { return }
        }
    }

    /// Carries at most `budget` bytes from `a` to `b` (a reader that takes that much at a time;
    /// a write may arrive in pieces), everything from `b` to `a`, and runs what the links asked
    /// to run later; flushes both daemons as the transport does after each read. Returns the
    /// bytes carried from `a` to `b`.
    @discardableResult
    func carry(_ wire: Wire, atMost budget: Int, daemons: [Daemon]) -> Int {
        var carried = 0
        while carried < budget, !wire.aToB.isEmpty {
            let piece = min(budget - carried, wire.aToB[0].count)
            let bytes = Array(wire.aToB[0].prefix(piece))
            if piece == wire.aToB[0].count { wire.aToB.removeFirst() } else { wire.aToB[0].removeFirst(piece) }
            carried += piece
            wire.b?.receive(bytes)
            taken(piece, from: wire.a, on: wire)
        }
        while !wire.bToA.isEmpty {
            let chunk = wire.bToA.removeFirst()
            wire.a?.receive(chunk)
            taken(chunk.count, from: wire.b, on: wire)
        }
        for daemon in daemons { daemon.flush(); daemon.commit() }
        _ = runLater(wire)
        return carried
    }

    private func taken(_ count: Int, from link: PeerLink?, on wire: Wire) {
        if wire.paced { link?.outputTaken(count) }
    }

    /// Runs what the wire's links asked to run on a later turn; whether there was anything.
    private func runLater(_ wire: Wire) -> Bool {
        let tasks = wire.later
        wire.later = []
        for task in tasks { task() }
        return !tasks.isEmpty
    }

    /// Cuts a link as a network failure would: queued bytes are lost, both ends see the stream end.
    func sever(_ wire: Wire) {
        wire.aToB.removeAll()
        wire.bToA.removeAll()
        wire.open = false
        wire.a?.endOfInput()
        wire.b?.endOfInput()
    }
}
