import JSON
import Logging
import QuireProtocol

/// Reopens that wait, after a restart, for the configured peers' first catch-up
/// (protocol/decisions/reopen-catch-up.md): a `document/open` that names a `view` of a document
/// peers hold is answered once every configured peer's link has brought what that peer held and
/// this copy lacked (`FirstCatchUp`), or once `DaemonConfiguration.reopenCatchUpWait` seconds
/// passed, whichever is first. Nothing else waits: other editors, and the same editor's
/// messages about other documents, are handled meanwhile; its later messages about that
/// document wait behind the reopen, in order.
///
/// Guarantees: every held message is handled exactly once, in its connection's order for its
/// document, at most the bound after the reopen arrived; a connection that went away drops
/// what it had held. Inactive (nothing is ever held) until the server calls `activate`
/// (`Daemon.waitForPeersBeforeReopens`), so daemons without a network answer at once.
/// May call: the documents, the peer links (their first catch-up), the clock, and the end of a
/// read the composition root gives it; held messages go back to their `HeldMessageSource`.
final class ReopenWaits {
    struct Held {
        weak var connection: (any HeldMessageSource)?
        let uri: String
        var bodies: [[UInt8]]
        let deadline: Double
    }

    /// Peers this daemon was told to connect to (`--connect`, `--connect-command`).
    private(set) var configuredPeers = 0
    /// When the daemon started serving (monotonic seconds).
    private var startedAt = 0.0
    /// Runs work on the daemon's event loop after a delay in seconds; nil: never wait.
    private var schedule: ((Double, @escaping () -> Void) -> Void)?
    private(set) var held: [Held] = []
    private var releaseQueued = false
    /// The end of a read, after held messages were handled (set by the composition root).
    var endRead: () -> Void = {}

    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let clock: DaemonClock
    private unowned let documents: any DocumentLookup
    private unowned let links: PeerLinks

    init(configuration: DaemonConfiguration, logger: Logger, clock: DaemonClock, documents: any DocumentLookup, links: PeerLinks) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.documents = documents
        self.links = links
    }

    /// Makes reopens wait (bounded) for the first catch-up of `configuredPeers` peers from now
    /// on; `schedule` runs work on the daemon's event loop after a delay (seconds).
    func activate(configuredPeers: Int, schedule: @escaping (Double, @escaping () -> Void) -> Void) {
        self.configuredPeers = configuredPeers
        startedAt = clock.monotonic()
        self.schedule = schedule
    }

    /// Whether `body`, from `connection`, is held: a reopen that must wait for the peers, or a
    /// later message of the same connection about a document whose reopen waits. Held messages
    /// are handled later (`releaseCaughtUp`), through `HeldMessageSource.process`.
    func holds(_ body: [UInt8], from connection: any HeldMessageSource) -> Bool {
        guard let schedule, configuredPeers > 0, configuration.reopenCatchUpWait > 0 else { return false }
        let pending = held.contains { $0.connection === connection }
        guard pending || Self.mentionsOpen(body),
              let message = try? JSONParser(maximumDepth: configuration.maximumNestingDepth).parse(body) else { return false }
        let params = message["params"]
        let uri = params?["uri"]?.stringValue ?? params?["file"]?.stringValue.map(ProjectNaming.documentName(ofFile:))
        guard let uri else { return false }
        if pending, let index = held.firstIndex(where: { $0.connection === connection && $0.uri == uri }) {
            held[index].bodies.append(body)
            return true
        }
        guard message["method"] == .string(OpenDocumentRequest.method), params?["view"]?.stringValue != nil else { return false }
        // Only a document some peer holds can have anything to catch up.
        if let document = documents.document(uri), !document.everShared { return false }
        let now = clock.monotonic()
        guard !mayGo(uri, now: now) else { return false }
        let bound = configuration.reopenCatchUpWait
        held.append(Held(connection: connection, uri: uri, bodies: [body], deadline: now + bound))
        logger.info("session \(connection.sessionID): the reopen of \(uri) waits up to \(bound) s for the configured peers to catch up")
        schedule(bound) { [weak self] in self?.releaseCaughtUp() }
        return true
    }

    /// Something was read (an end-of-read step): held reopens are looked at again on the next
    /// turn. A look that lets nothing go ends no read, so a wait never spins.
    func peersProgressed() {
        guard !held.isEmpty, !releaseQueued, let schedule else { return }
        releaseQueued = true
        schedule(0) { [weak self] in self?.releaseCaughtUp() }
    }

    /// Handles the held reopens whose peers caught up or whose time is up, with the messages
    /// held behind them.
    func releaseCaughtUp() {
        releaseQueued = false
        let now = clock.monotonic()
        let isDue: (Held) -> Bool = { $0.connection == nil || now >= $0.deadline || self.mayGo($0.uri, now: now) }
        let due = held.filter(isDue)
        held.removeAll(where: isDue)
        var handled = false
        for entry in due {
            guard let connection = entry.connection else { continue }
            let reason = configuredPeersCaughtUp(on: entry.uri) ? "the peers caught up"
                : now >= entry.deadline ? "no catch-up within the bound" : "no configured peer is catching up"
            logger.info("session \(connection.sessionID): the reopen of \(entry.uri) goes on (\(reason))")
            for body in entry.bodies { connection.process(body) }
            handled = true
        }
        if handled { endRead() }
    }

    /// Whether a reopen of `uri` need not wait: every configured peer's link finished its first
    /// catch-up of it; after the start-up window, only links that are up and still catching up
    /// are waited for (a peer that stays away does not make every later reopen wait).
    /// Only links that carry the document count (those of its scope): the configured peers are
    /// general, so a project's document waits only for project links up and catching up.
    func mayGo(_ uri: String, now: Double) -> Bool {
        if configuredPeersCaughtUp(on: uri) { return true }
        guard now >= startedAt + configuration.reopenCatchUpWait || DocumentScope(uri: uri) != .general else { return false }
        return !dialedLinks(carrying: uri).contains { $0.state == .established && !$0.hasCaughtUp(on: uri) }
    }

    /// Whether as many peers as were configured have links here that finished their first
    /// catch-up of `uri` (links this daemon made; each peer counted once).
    private func configuredPeersCaughtUp(on uri: String) -> Bool {
        guard DocumentScope(uri: uri) == .general else { return false }
        let caughtUp = Set(dialedLinks(carrying: uri).filter { $0.hasCaughtUp(on: uri) }.compactMap(\.peerReplica))
        return caughtUp.count >= configuredPeers
    }

    /// The links this daemon made that carry document `uri` (of its scope).
    private func dialedLinks(carrying uri: String) -> [any PeerEndpoint] {
        links.links.values.filter { !$0.isIncoming && $0.scope?.contains(uri: uri) == true }
    }

    /// Whether `body` may be a `document/open` (a cheap look before parsing).
    private static func mentionsOpen(_ body: [UInt8]) -> Bool {
        let needle = Array(OpenDocumentRequest.method.utf8)
        guard body.count >= needle.count else { return false }
        return body.withUnsafeBufferPointer { bytes in
            (0...(bytes.count - needle.count)).contains { start in
                bytes[start] == needle[0] && needle.indices.allSatisfy { bytes[start + $0] == needle[$0] }
            }
        }
    }
}
