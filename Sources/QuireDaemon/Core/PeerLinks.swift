import Logging

/// The peer links of this daemon by id: admission of handshaking links (slots per daemon and
/// per address), the links' lifecycle as editors hear of it (`peer/changed`, failed attempts
/// summarised per interval), heartbeats, and the network transport editors ask to listen and
/// connect. Holds links only as `PeerEndpoint`s. May call: the editors (`EditorNotifier`).
final class PeerLinks {
    private(set) var links: [Int: any PeerEndpoint] = [:]
    private var nextID = 1
    /// Listening and connecting for `peer/*` requests; set by the server that runs the daemon.
    weak var transport: PeerTransport?
    /// Runs when a link closed, after it left the registry and before editors hear of it (its
    /// presence goes, rounds waiting on it fail, its holders' last contact is noted).
    var onClosed: (any PeerEndpoint) -> Void = { _ in }
    private let configuration: DaemonConfiguration
    /// The secrets links are made with, by scope (`PeerSecrets`).
    private(set) var secrets: PeerSecrets
    private let logger: Logger
    private let clock: DaemonClock
    private let sessions: SessionRegistry
    /// Hosts that peers authenticated from (most recent last, at most 256): their new connections
    /// are favoured for handshake slots.
    private var authenticatedHosts: [String] = []
    /// Failed attempts (never-authenticated links, refused connections) within one interval.
    private var failedAttempts: (since: Double, reasons: [String: Int])?
    /// Handshakes incoming links may still start (`HandshakeRate`).
    private var handshakeRate = HandshakeRate()
    /// When a connection refused for the handshake rate was last logged: at most once per
    /// summary interval, so a flood costs the log one line per interval (and editors one summary).
    private var rateRefusalLoggedAt = -Double.infinity

    init(configuration: DaemonConfiguration, logger: Logger, clock: DaemonClock, sessions: SessionRegistry) {
        self.configuration = configuration
        secrets = PeerSecrets(general: configuration.peerSecret)
        self.logger = logger
        self.clock = clock
        self.sessions = sessions
    }

    var inOrder: [any PeerEndpoint] { links.values.sorted { $0.id < $1.id } }
    var established: [any PeerEndpoint] { inOrder.filter(\.isEstablished) }

    /// Admits a new link made by `make` with the next id and the secrets it may speak with, or
    /// throws when peering is not allowed (no secret, or one too short) or an incoming handshake
    /// slot is not free. `scope`: the one secret the link speaks with; nil on an incoming link:
    /// every secret held, the connector's proof picks one (nil on a link this daemon dials:
    /// the general secret). `secret`: exactly that one of `scope`'s (held: the member secret or
    /// an invitation's), whichever role the link takes. Incoming
    /// handshake slots (`maximumUnauthenticatedLinks` in all, `maximumHandshakesPerAddress` per
    /// `remoteHost`) are refused when full, except that a host that authenticated here before
    /// takes the slot of the oldest handshake from a host that never did; links this daemon
    /// starts itself are not counted, so strangers cannot stop it reconnecting to its peers.
    func admit<Link: PeerEndpoint>(incoming: Bool, remoteHost: String?, scope: DocumentScope? = nil, secret: [UInt8]? = nil,
                                    make: (_ id: Int, _ secrets: [(scope: DocumentScope, secret: [UInt8])]) -> Link) throws -> Link {
        let candidates = try secretsFor(incoming: incoming, scope: scope, secret: secret)
        if incoming {
            let known = remoteHost.map { authenticatedHosts.contains($0) } ?? false
            if let host = Self.heldToAddressLimits(remoteHost),
               let refusal = handshakeRate.take(host: host, known: known, now: clock.monotonic(), configuration: configuration) {
                throw rateRefused(refusal)
            }
            let handshaking = inOrder.filter { $0.state == .handshaking && $0.isIncoming }
            if let host = Self.heldToAddressLimits(remoteHost) {
                let fromHost = handshaking.filter { $0.remoteHost == host }
                if fromHost.count >= configuration.maximumHandshakesPerAddress {
                    attemptFailed(reason: "refused: \(fromHost.count) handshakes from \(host) already under way", link: nil)
                    throw PeeringError.tooManyHandshakesFrom(host, fromHost.count)
                }
            }
            if handshaking.count >= configuration.maximumUnauthenticatedLinks {
                let stranger = handshaking.first { link in !(link.remoteHost.map { authenticatedHosts.contains($0) } ?? false) }
                if known, let stranger {
                    stranger.cut("handshake slot given to \(remoteHost ?? "?"), which authenticated here before")
                } else {
                    attemptFailed(reason: "refused: \(handshaking.count) handshakes already under way", link: nil)
                    throw PeeringError.tooManyHandshakes(handshaking.count)
                }
            }
        }
        let link = make(nextID, candidates)
        nextID += 1
        links[link.id] = link
        return link
    }

    /// How links from this daemon's own peer socket are shown and counted (`PeerSocketServer`).
    static let ownSocketAddress = "peer socket"

    /// `host`, when links from it are held to the limits of one address (the handshake rate,
    /// handshakes at once, links up at once); nil for none and for this daemon's own peer
    /// socket. Only processes of this user reach that socket (`SO_PEERCRED`), and every member
    /// who reaches this daemon over ssh (`ssh host quire peer --stdio`) comes through it: held
    /// to one address's limits, a team of a dozen members on three projects would be refused,
    /// and a restart of this daemon would see their reconnects refused for the rate. It is
    /// still held to the limits in all.
    static func heldToAddressLimits(_ host: String?) -> String? {
        host == ownSocketAddress ? nil : host
    }

    /// The error for a connection refused for the handshake rate, counted among failed attempts
    /// (logged at most once per summary interval).
    private func rateRefused(_ refusal: HandshakeRate.Refusal) -> PeeringError {
        let error: PeeringError
        switch refusal {
        case .address(let host):
            error = .handshakeRateFrom(host, configuration.handshakesPerSecondPerAddress, configuration.handshakeBurstPerAddress)
        case .all:
            error = .handshakeRate(configuration.handshakesPerSecond, configuration.handshakeBurst)
        }
        let now = clock.wall()
        let quiet = now - rateRefusalLoggedAt < configuration.peerFailureSummaryInterval
        if !quiet { rateRefusalLoggedAt = now }
        attemptFailed(reason: "refused: \(error)", link: nil, logged: !quiet)
        return error
    }

    /// The secrets a new link may speak with (see `admit`).
    private func secretsFor(incoming: Bool, scope: DocumentScope?, secret given: [UInt8]?) throws -> [(scope: DocumentScope, secret: [UInt8])] {
        // A secret too short is never spoken with; when it is the only one, that is the refusal.
        let usable = secrets.all.filter { $0.secret.count >= PeerSecret.minimumMaterialBytes }
        if let given {
            let scope = scope ?? .general
            guard usable.contains(where: { $0.scope == scope && $0.secret == given }) else {
                throw scope == .general ? PeeringError.noSecret : PeeringError.noSecretOf(scope)
            }
            return [(scope, given)]
        }
        let weak = secrets.all.count > usable.count
        if incoming, scope == nil {
            guard !usable.isEmpty else { throw weak ? PeeringError.weakSecret : PeeringError.noSecret }
            return usable
        }
        let scope = scope ?? .general
        if incoming, case .project = scope, secrets.holds(scope) {
            // A project's port: its member secret and its invitations' (protocol/decisions/roles.md).
            return usable.filter { $0.scope == scope }
        }
        guard let secret = secrets.secret(for: scope) else { throw scope == .general ? PeeringError.noSecret : PeeringError.noSecretOf(scope) }
        guard secret.count >= PeerSecret.minimumMaterialBytes else { throw PeeringError.weakSecret }
        return [(scope, secret)]
    }

    /// Holds `secret` for `scope` from now on (`PeerSecrets.add`).
    func addSecret(_ secret: [UInt8], scope: DocumentScope, derivedKey: Bool = true) throws {
        try secrets.add(secret, scope: scope, derivedKey: derivedKey)
        logger.info("peer secret of \(scope) added")
    }

    /// Holds `secret` as an invitation to project `key` (`PeerSecrets.addInvitation`).
    func addInvitation(_ secret: [UInt8], projectKey key: String) throws {
        try secrets.addInvitation(secret, projectKey: key)
        logger.info("an invitation secret of project \(key) added")
    }

    /// Forgets the invitation `secret` of project `key`; a handshake under way with it is refused
    /// by the project service when it completes (the invitation is gone).
    func removeInvitation(_ secret: [UInt8], projectKey key: String) {
        guard secrets.removeInvitation(secret, projectKey: key) else { return }
        logger.info("an invitation secret of project \(key) removed")
    }

    /// Forgets the secret of `scope` and closes every link of that scope (a link still in its
    /// handshake is refused when it completes: `isHeld`).
    func removeSecret(scope: DocumentScope) {
        guard secrets.remove(scope: scope) else { return }
        logger.info("peer secret of \(scope) removed")
        close(scope: scope, reason: "no longer shared: the secret of \(scope) was removed")
    }

    /// Whether the secret of `scope` is still held (a link of a secret removed meanwhile is cut).
    func isHeld(_ scope: DocumentScope) -> Bool { secrets.holds(scope) }

    /// Closes every link of `scope` with `reason`.
    func close(scope: DocumentScope, reason: String) {
        for link in inOrder where link.scope == scope { link.close(reason) }
    }

    /// Why `link`, which just authenticated, may not stay up, or nil (protocol/peer.md,
    /// *Handshake*): at most `maximumIncomingPeerLinks` links others made may be up at once, and
    /// `maximumPeerLinksPerAddress` from one address (each may hold a 16 MiB frame and 9 MiB of
    /// output, and a key costs nothing to make). A peer key with more than `maximumLinksPerPeer`
    /// links of one scope loses its oldest: an honest pair has one or two (both dialing), and a
    /// reconnect replaces a link that has not noticed yet it is dead.
    func refusal(ofEstablished link: any PeerEndpoint) -> String? {
        if link.isIncoming {
            let incoming = links.values.filter { $0 !== link && $0.isIncoming && $0.isEstablished }
            if incoming.count >= configuration.maximumIncomingPeerLinks {
                return "this daemon already has \(incoming.count) peer links others made, the most it keeps"
            }
            if let host = Self.heldToAddressLimits(link.remoteHost) {
                let fromHost = incoming.filter { $0.remoteHost == host }.count
                if fromHost >= configuration.maximumPeerLinksPerAddress {
                    return "this daemon already has \(fromHost) peer links from \(host), the most it keeps from one address"
                }
            }
        }
        if let key = link.peerKey, let scope = link.scope {
            let same = inOrder.filter { $0 !== link && $0.isEstablished && $0.peerKey == key && $0.scope == scope }
            if same.count >= configuration.maximumLinksPerPeer {
                same.first?.cut("replaced by a newer link of the same peer (at most \(configuration.maximumLinksPerPeer) of one peer and scope)")
            }
        }
        return nil
    }

    /// `link` completed its handshake.
    func established(_ link: any PeerEndpoint) {
        if let host = link.remoteHost {
            authenticatedHosts.removeAll { $0 == host }
            authenticatedHosts.append(host)
            if authenticatedHosts.count > 256 { authenticatedHosts.removeFirst() }
        }
        announce(link, event: "joined", reason: nil)
    }

    /// `link` closed (it calls this once).
    func closed(_ link: any PeerEndpoint) {
        links[link.id] = nil
        onClosed(link)
        guard link.wasEstablished else { return attemptFailed(reason: link.closeReason ?? "closed", link: link) }
        let leftOnPurpose = ["the peer", "shutting", "disconnected by an editor", "no longer shared"]
        announce(link, event: link.closeReason.map { reason in leftOnPurpose.contains { reason.hasPrefix($0) } ? "left" : "failed" } ?? "left",
                 reason: link.closeReason)
    }

    /// Tells every editor that a peer joined, left or failed (`peer/changed`).
    private func announce(_ link: any PeerEndpoint, event: String, reason: String?) {
        logger.info("peer link \(link.id) \(event)\(reason.map { ": \($0)" } ?? "")")
        sessions.tellPeerChange(link: link.id, event: event, user: link.peerUser ?? "", address: link.address, reason: reason)
    }

    /// A link that never authenticated closed, or a connection was refused: editors hear of the
    /// first of an interval at once and of the rest in one summary when it ends, so a flood of
    /// attempts costs them one notification per interval.
    private func attemptFailed(reason: String, link: (any PeerEndpoint)?, logged: Bool = true) {
        if logged { logger.warning("peer attempt failed\(link.map { " (link \($0.id), \($0.address))" } ?? ""): \(reason)") }
        let now = clock.wall()
        if let window = failedAttempts, now - window.since < configuration.peerFailureSummaryInterval {
            failedAttempts?.reasons[Self.failureKind(reason), default: 0] += 1
            return
        }
        tellFailureSummary()
        failedAttempts = (now, [:])
        sessions.tellPeerChange(link: link?.id ?? 0, event: "failed", user: link?.peerUser ?? "", address: link?.address ?? "", reason: reason)
    }

    /// Sends the summary of the attempts not told one by one, once their interval is over
    /// (`now` nil: at once).
    func tellFailureSummary(now: Double? = nil) {
        guard let window = failedAttempts else { return }
        if let now, now - window.since < configuration.peerFailureSummaryInterval { return }
        failedAttempts = nil
        let count = window.reasons.values.reduce(0, +)
        guard count > 0 else { return }
        let kinds = window.reasons.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        let summary = "\(count) more peer attempt\(count == 1 ? "" : "s") failed within \(Int(configuration.peerFailureSummaryInterval)) seconds: \(kinds)"
        logger.warning("\(summary)")
        sessions.tellPeerChange(link: 0, event: "failed", user: "", address: "", reason: summary)
    }

    /// What kind of failure `reason` is, for summaries: its words before the first colon.
    private static func failureKind(_ reason: String) -> String {
        String(reason.prefix { $0 != ":" }.prefix(60))
    }

    /// Heartbeats for every link, then digests on the established ones.
    func tick(now: Double, interval: Double) {
        for link in inOrder { link.tick(now: now, interval: interval) }
        for link in inOrder where link.isEstablished { link.sendDueDigests() }
    }

    /// Closes every link (the daemon is exiting).
    func closeAll() {
        for link in links.values { link.close("shutting down") }
    }
}

extension PeerEndpoint {
    /// Whether this link is up and carries the document named `uri` (one of its scope,
    /// protocol/peer.md, *Which documents*).
    func carries(_ uri: String) -> Bool { isEstablished && scope?.contains(uri: uri) == true }
}
