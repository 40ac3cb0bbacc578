import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// The state of a peer link: handshaking until the peer proved the secret and its identity.
public enum PeerLinkState: String, Sendable { case handshaking, established, closed }

/// One link to another Quire daemon, over any byte stream: a handshake (protocol version, an
/// ephemeral key exchange keyed by the shared secret, proofs of the secret and of each side's
/// identity key bound to this link's transcript), then sealed frames only: delta sync of every
/// document, then live operations both ways (`protocol/peer.md`).
///
/// Guarantees: nothing the peer sends touches a document, and nothing of a document is sent,
/// before the peer has proven the secret on this very link; every frame after the hellos is
/// encrypted and authenticated, so a tampered, replayed, reordered or dropped frame cuts the
/// link before anything of it is used. Before authentication a frame may hold at most
/// `maximumHandshakeFrameBytes` and the handshake must end within `peerHandshakeTimeout`.
/// What a peer lacks is sent at the pace it reads, and a peer that stops reading is cut once
/// its live output waiting passes a bound (`PeerLink+Output`).
/// A peer that speaks garbage, sends an oversized frame, an operation that can never apply or a
/// version vector claiming edits this daemon never made is cut off with a logged reason, and
/// the operations of a rejected frame are not applied (each frame is validated whole first).
public final class PeerLink: PeerEndpoint {
    public typealias State = PeerLinkState

    /// Protocol version spoken by this build; a peer with another one is refused.
    public static let protocolVersion = SecureChannel.protocolVersion
    /// A user name from a peer is cut to this many characters (control characters removed).
    public static let maximumUserNameLength = DisplayText.maximumNameLength
    /// A reason for closing a link, ours or the peer's, is cut to this many characters (control
    /// and format characters removed) before it is logged, shown or sent.
    public static let maximumReasonLength = DisplayText.maximumReasonLength

    public let id: Int
    /// The parts of the daemon this link may call (`PeerHost`), never the `Daemon` itself.
    unowned let daemon: any PeerHost
    /// Hands bytes to the transport (held back while the store has edits not yet durable).
    let write: ([UInt8]) -> Void
    private let closeTransport: () -> Void
    /// Framing, handshake and sealing (`SecureChannel`): what comes in is delivered here only
    /// once the peer proved the secret and its identity.
    let channel: SecureChannel
    public private(set) var state = State.handshaking
    /// True once the handshake completed (it stays true after the link closes).
    public private(set) var wasEstablished = false
    private var sentDocuments = false
    /// The peer's user name (at most `maximumUserNameLength` characters, no control characters).
    public private(set) var peerUser: String?
    /// The peer daemon's replica ID, once it proved the secret.
    private(set) var peerReplica: ReplicaID?
    /// The fingerprint of the peer's identity key, once it proved it holds that key.
    public private(set) var peerFingerprint: String?
    /// When set, only a peer with this identity fingerprint is accepted on this link.
    public var expectedFingerprint: String? {
        get { channel.expectedFingerprint }
        set { channel.expectedFingerprint = newValue }
    }
    /// Whether the peer connected to this daemon (and so counts against the handshake cap): the
    /// accepting side, which shows nothing that depends on the secret before the connector proved it.
    var isIncoming: Bool { channel.isIncoming }
    /// The remote host (without port) of an incoming TCP link, for the per-address handshake cap.
    var remoteHost: String?
    /// Whether the peer's hello arrived (an incoming link must send it within `peerHelloTimeout`).
    public var heardHello: Bool { channel.heardHello }
    /// Whether frames on this link are encrypted (from the first frame after the hellos on).
    public var isEncrypted: Bool { channel.isEncrypted }
    public private(set) var closeReason: String?
    public private(set) var bytesIn = 0
    public internal(set) var bytesOut = 0
    public private(set) var operationsIn = 0
    public internal(set) var operationsOut = 0
    /// What the peer is known to have, per document: from its document list, plus every
    /// operation sent to it or received from it. Drives `behind`.
    /// (See also `staleAtPeer`.)
    var peerVersions: [String: [ReplicaID: UInt64]] = [:]
    /// Documents whose copy here predates a retiring round on the peer, with the peer's epochs:
    /// nothing of them goes out on this link until the peer's state arrived and this copy rebased.
    private(set) var staleAtPeer: [String: Set<String>] = [:]
    /// Presence the peer sent and this daemon has not applied yet: the newest per document and
    /// origin, in arrival order (`PresenceService.applyQueued`).
    private var queuedPresence: [String: PresenceMessage] = [:]
    private var queuedPresenceOrder: [String] = []
    /// Presence messages this link may still have applied now (a token bucket, refilled at
    /// `Configuration.presencePerSecond` up to `presenceBurst`), and when it was last refilled.
    private var presenceTokens: Double?
    private var presenceRefilledAt = 0.0
    private var toldRefusedPresence = false
    /// Editors' presence one read may hold waiting (distinct documents and origins); more cuts the link.
    static let maximumQueuedPresence = 4096

    /// Holds `message` until the end of the read, replacing an older one of the same editor.
    /// False when too many editors' presence is waiting.
    func queuePresence(_ message: PresenceMessage) -> Bool {
        let key = "\(message.documentID) \(message.origin) \(message.uri)"
        if let old = queuedPresence[key] {
            if old.sequence <= message.sequence { queuedPresence[key] = message }
            return true
        }
        guard queuedPresence.count < Self.maximumQueuedPresence else { return false }
        queuedPresence[key] = message
        queuedPresenceOrder.append(key)
        return true
    }

    /// The waiting presence messages this link's rate allows at `now` (seconds, monotonic).
    func takeQueuedPresence(now: Double) -> [PresenceMessage] {
        guard !queuedPresenceOrder.isEmpty else { return [] }
        let configuration = daemon.configuration
        var tokens = presenceTokens ?? configuration.presenceBurst
        tokens = min(configuration.presenceBurst, tokens + max(0, now - presenceRefilledAt) * configuration.presencePerSecond)
        presenceRefilledAt = now
        let count = min(queuedPresenceOrder.count, Int(tokens))
        presenceTokens = tokens - Double(count)
        let keys = queuedPresenceOrder.prefix(count)
        queuedPresenceOrder.removeFirst(count)
        if count > 0, !queuedPresenceOrder.isEmpty {
            logger.debug("peer link \(id): \(queuedPresenceOrder.count) presence messages wait for the link's rate")
        }
        return keys.compactMap { queuedPresence.removeValue(forKey: $0) }
    }

    /// A presence message refused for its origin: logged once per link, then dropped quietly.
    func refusedPresence(_ reason: String) {
        guard !toldRefusedPresence else { return }
        toldRefusedPresence = true
        logger.warning("peer link \(id): \(reason) (further such messages are dropped without a word)")
    }

    /// Digest rounds on this link: what to ask about, what to answer (`PeerLink+Digests`).
    var digests = DigestExchange()
    /// What this link has to write, paced to what the peer reads (`PeerLink+Output`).
    var outbox = PeerOutbox()
    /// Set once live output passed `maximumUnsentPeerBytes`: nothing more is written, the link
    /// is being cut.
    var outputOverflowed = false
    /// The outbox is being written (a report of bytes taken meanwhile only counts them), and a
    /// turn that writes it is scheduled.
    var pumpingOutput = false
    var outputPumpScheduled = false
    /// Runs a closure on a later turn of the link's event loop (set by a paced transport).
    var later: ((@escaping () -> Void) -> Void)?

    /// Elements (characters and tombstones) this daemon has and the peer is not known to have.
    public var behind: Int {
        var total: UInt64 = 0
        for (uri, document) in daemon.documents {
            let theirs = peerVersions[uri] ?? [:]
            for (replica, count) in document.text.versionVector.counts { total += count - min(count, theirs[replica] ?? 0) }
        }
        return Int(truncatingIfNeeded: total)
    }

    func notePeerHas(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of uri: String) {
        for case .insert(let insertion) in operations {
            let end = insertion.id.counter + UInt64(insertion.count)
            if (peerVersions[uri]?[insertion.id.replica] ?? 0) < end { peerVersions[uri, default: [:]][insertion.id.replica] = end }
        }
    }

    /// Called once when the link closes, with the reason.
    public var onClose: ((String) -> Void)?
    /// Where the link goes, for status ("tcp 127.0.0.1:7070", "command ssh ...", "stdio").
    public var address = ""
    /// Seconds (on the caller's clock) when the peer last sent anything.
    private var lastHeard: Double?
    private var lastSent: Double?

    init(id: Int, daemon: any PeerHost, secret: [UInt8], nonce: [UInt8], incoming: Bool, remoteHost: String?,
         write: @escaping ([UInt8]) -> Void, close: @escaping () -> Void) {
        self.id = id
        self.daemon = daemon
        self.write = daemon.gated(write)
        self.closeTransport = close
        self.remoteHost = remoteHost
        let configuration = daemon.configuration
        channel = SecureChannel(secret: secret, nonce: nonce, incoming: incoming, handshakeFrameBytes: configuration.maximumHandshakeFrameBytes,
                                peerFrameBytes: configuration.maximumPeerFrameBytes, trustedFingerprints: configuration.trustedPeerFingerprints,
                                credentials: { [unowned daemon] in .init(replica: daemon.replica, user: daemon.userName, identity: daemon.identity) })
    }

    private var logger: Logger { daemon.logger }

    /// Opens the handshake; both sides call it as soon as the stream is up.
    /// The hello carries only the protocol version, a nonce and an ephemeral public key: who
    /// this daemon is goes in the sealed `auth` that follows.
    public func start() {
        send(channel.start())
    }

    /// Bytes from the peer: through the secure channel, then what it delivers to the session.
    public func receive(_ bytes: some Collection<UInt8>) {
        guard state != .closed else { return }
        bytesIn += bytes.count
        heardFrom = true
        for action in channel.receive(bytes) {
            guard state != .closed else { return }
            switch action {
            case .send(let frame): send(frame)
            case .established(let peer): established(peer)
            case .deliver(let frame):
                do {
                    try handle(frame)
                } catch {
                    cut("malformed frame: \(error)")
                }
            case .cut(let reason): cut(reason)
            case .finish(let reason): finish(reason)
            }
        }
    }

    /// The handshake completed: the link is up, the peer gets our document list.
    private func established(_ peer: SecureChannel.Peer) {
        peerReplica = peer.replica
        peerFingerprint = peer.fingerprint
        peerUser = peer.user
        state = .established
        wasEstablished = true
        logger.info("peer link \(id): established with \(peer.user.isEmpty ? "replica \(peer.replica.rawValue)" : peer.user), key \(peer.fingerprint)")
        sendDocumentList()
        daemon.peerLinkEstablished(self)
    }

    /// How long the handshake may take, in seconds.
    public var handshakeTimeout: Double { daemon.configuration.peerHandshakeTimeout }

    /// The handshake did not end in time (`Configuration.peerHandshakeTimeout`).
    public func handshakeTimedOut() {
        guard state == .handshaking else { return }
        cut("no handshake within \(Int(handshakeTimeout)) seconds")
    }

    /// How long a peer that connected here has to send its hello, in seconds.
    public var helloTimeout: Double { daemon.configuration.peerHelloTimeout }

    /// An incoming link's peer sent no hello in time (`Configuration.peerHelloTimeout`): its
    /// handshake slot goes to someone else.
    public func helloTimedOut() {
        guard state == .handshaking, isIncoming, !heardHello else { return }
        let seconds = helloTimeout == helloTimeout.rounded() ? "\(Int(helloTimeout))" : "\(helloTimeout)"
        cut("no hello within \(seconds) seconds")
    }

    /// The end of a read from the peer: editors hear what this link's operations changed, once
    /// they are durable (`OutputGate.endRead`).
    func endRead() {
        daemon.endRead()
    }

    /// The stream ended.
    public func endOfInput() {
        guard state != .closed else { return }
        finish("the peer closed the connection" + (channel.bufferedByteCount > 0 ? " in the middle of a frame" : ""))
    }

    private var heardFrom = false
    /// When the first tick saw this link (a bound on the handshake for any transport).
    private var startedAt: Double?

    /// Heartbeats and dead-peer detection, driven by a timer: sends a heartbeat when nothing
    /// was sent for `interval`, and cuts the link when nothing was heard for `3 * interval`.
    public func tick(now: Double, interval: Double) {
        guard state != .closed else { return }
        if startedAt == nil { startedAt = now }
        if state == .handshaking, let started = startedAt, now - started > handshakeTimeout {
            return handshakeTimedOut()
        }
        if state == .handshaking, isIncoming, !heardHello, let started = startedAt, now - started > helloTimeout {
            return helloTimedOut()
        }
        if heardFrom || lastHeard == nil { lastHeard = now; heardFrom = false }
        if let last = lastHeard, now - last > 3 * interval {
            return cut("no word from the peer for \(Int(now - last)) seconds")
        }
        if state == .established, now - (lastSent ?? 0) >= interval {
            send(.heartbeat)
            lastSent = now
        }
    }

    // MARK: Frames

    private func handle(_ frame: PeerFrame) throws {
        let decoded: PeerMessage?
        do { decoded = try PeerMessage.decode(frame, limits: daemon.configuration) } catch { return cut(error.description) }
        guard let message = decoded else { return }   // the secure channel's (never delivered)
        digests.noteReceived(frame)
        switch message {
        case .documents(let list):
            try sendWhatTheyLack(list)
        case .operations(let uri, let documentID, let payload):
            try receiveOperations(uri: uri, documentID: documentID, payload: payload)
        case .state(let uri, let documentID, let payload):
            receiveState(uri: uri, documentID: documentID, payload: payload)
        case .stability(let message):
            daemon.receiveStability(message, from: self)
        case .presence(let message):
            guard queuePresence(message) else {
                return cut("more than \(Self.maximumQueuedPresence) editors' presence waiting in one read")
            }
        case .digest(let message):
            receiveDigest(message)
        case .heartbeat:
            break
        }
    }

    /// `text` as something safe to show (`DisplayText.clean`).
    static func displayName(_ text: String, limit: Int = maximumUserNameLength) -> String {
        DisplayText.clean(text, limit: limit)
    }

    private func sendDocumentList() {
        guard !sentDocuments else { return }
        sentDocuments = true
        // A document an editor only opened (no edit yet) is listed but not yet shared: a peer's
        // document of the same name may still take its place.
        for document in daemon.documents.values where !document.isPristine { daemon.markShared(document, holder: peerReplica) }
        send(.documents(["initial": true, "documents": .array(daemon.documents.values.sorted { $0.uri < $1.uri }.map(entry))]))
    }

    /// Tells the peer about a document created here after the link came up, so that an editor
    /// opening that name on the other side joins it instead of starting an unrelated one.
    func announce(_ document: SharedDocument) {
        guard state == .established else { return }
        send(announcement(of: document))
    }

    /// The frame that announces `document` (noting, once it has edits, that the peer holds it).
    func announcement(of document: SharedDocument) -> PeerFrame {
        if !document.isPristine { daemon.markShared(document, holder: peerReplica) }
        return .documents(["initial": false, "documents": [entry(for: document)]])
    }

    private func entry(for document: SharedDocument) -> JSONValue {
        var version: [String: JSONValue] = [:]
        for (replica, count) in document.text.versionVector.counts { version[String(replica.rawValue)] = .integer(Int64(count)) }
        var entry: [String: JSONValue] = ["uri": .string(document.uri), "id": .string(String(document.id)), "version": .object(version)]
        // It will come as a state to a peer that lacks it: no empty copy is made for it meanwhile.
        if document.text.scalars.compactedCount > 0 { entry["whole"] = true }
        // The retiring rounds this copy includes, and whether the peer must rebase onto our state.
        if !document.sharing.epochs.isEmpty { entry["epochs"] = .array(document.sharing.epochs.sorted().map { .string($0) }) }
        if isRetired(in: document) { entry["rebase"] = true }
        return .object(entry)
    }

    /// Whether the peer is a holder of `document` retired here: it gets a state to rebase onto,
    /// and no operations go either way until it has.
    func isRetired(in document: SharedDocument) -> Bool {
        peerReplica.map { document.sharing.retired[$0] != nil } ?? false
    }

    /// Delta sync: every document the peer listed gets a local copy (empty until its operations
    /// arrive) and the operations its version vector lacks; after the first list, documents the
    /// peer did not mention are sent whole.
    private func sendWhatTheyLack(_ list: DocumentList) throws {
        var listed: Set<String> = []
        for entry in list.entries {
            let (uri, id, counts) = (entry.uri, entry.id, entry.version)
            let vector = VersionVector(counts)
            // A document that will arrive whole: nothing to make or send until it does.
            if entry.whole, daemon.document(uri: uri, id: id) == nil { continue }
            if let local = daemon.documents[uri], local.id == id, let claim = daemon.impossibleClaim(in: vector, for: local) {
                return cut("version vector from the future: \(claim)")
            }
            if daemon.documents[uri] == nil, daemon.documents.count >= daemon.configuration.maximumDocuments {
                return cut("more than \(daemon.configuration.maximumDocuments) documents")
            }
            guard let document = daemon.documentForPeer(uri: uri, id: id, from: self, theirsIsEmpty: vector.counts.isEmpty) else { continue }
            listed.insert(document.uri)
            let epochs = entry.epochs
            if entry.rebase, document.id == id, !epochs.isEmpty, !epochs.isSubset(of: document.sharing.epochs) {
                // Our copy predates a retiring round there: nothing goes out until we rebased onto its state.
                staleAtPeer[document.uri] = epochs
                continue
            }
            if isRetired(in: document), let replica = peerReplica, let round = document.sharing.retired[replica] {
                guard epochs.contains(round) else {
                    sendState(of: document)
                    continue
                }
                // It rebased (here or elsewhere) onto a copy that took part in the round: a holder again.
                daemon.markShared(document, holder: replica) { $0.retired[replica] = nil }
            }
            if document.id == id { peerVersions[document.uri] = counts }
            // Sent at the pace the peer reads (what it lacks may be the whole document).
            queueCatchUp(CatchUp(document, .lacking(since: document.id == id ? vector : VersionVector(),
                                                    theyHaveNothing: vector.counts.isEmpty, announceIfNothing: false)))
            // Who is where in it, after the text those places are anchored to.
            for message in daemon.presenceMessages(of: document, for: self) { sendPresence(message) }
            // A later announcement of something we lack: say what we have, so the peer sends the rest.
            if !list.initial, document.id == id, !document.text.versionVector.dominates(vector) { announce(document) }
        }
        guard list.initial else { return }
        for document in daemon.documents.values.sorted(by: { $0.uri < $1.uri }) where !listed.contains(document.uri) {
            sendWhole(document)
        }
    }

    /// Asks again for the state of `document` when this copy still has to rebase onto the peer's
    /// (it waited for an editor to close it): the peer answers our entry with its state.
    func retryRebase(of document: SharedDocument) {
        guard state == .established, staleAtPeer[document.uri] != nil else { return }
        announce(document)
    }

    /// Sends all of `document` to a peer that lacks it, at the pace the peer reads: its
    /// operations, or its state once it has dropped tombstones (operations anchored to them could
    /// not be placed), or an announcement when it is empty.
    func sendWhole(_ document: SharedDocument) {
        queueCatchUp(CatchUp(document, .lacking(since: VersionVector(), theyHaveNothing: true, announceIfNothing: true)))
    }

    /// Sends the whole state of `document`, at the pace the peer reads.
    func sendState(of document: SharedDocument) {
        queueCatchUp(CatchUp(document, .state))
    }

    /// A document's whole state: taken as the document when this daemon lacks it (or has only an
    /// empty copy no editor shows), merged as the operations it lacks when it has the document.
    private func receiveState(uri: String, documentID: UInt64, payload: [UInt8]) {
        let received: ReplicatingText
        do {
            let limits = stateDecodingLimits
            received = try ReplicatingText(decodingState: payload, replica: daemon.replica, maximumElements: limits.elements, maximumReplicas: limits.replicas)
        } catch {
            return cut("undecodable state of \(uri): \(error)")
        }
        if let violation = stateBoundsViolation(received, uri: uri, documentID: documentID) { return cut(violation) }
        if let local = daemon.document(uri: uri, id: documentID) {
            if let epochs = staleAtPeer[local.uri] {
                if daemon.rebase(local, onto: received, epochs: epochs, from: self) {
                    staleAtPeer[local.uri] = nil
                    peerVersions[local.uri] = received.versionVector.counts
                    // Tell every peer where this copy stands now; the others send what it lacks.
                    for link in daemon.links.values where link.state == .established { link.announce(local) }
                }
                return
            }
            if isRetired(in: local) { return }   // its copy is stale here: it must rebase, not we
            if !local.text.versionVector.counts.isEmpty {
                // The same history: only what this copy lacks, as operations.
                let operations = received.operations(since: local.text.versionVector)
                for op in operations {
                    if let problem = local.text.scalars.validationError(for: op) ?? local.contentConflict(op) {
                        return cut("state of \(uri) does not fit this daemon's copy: \(problem)")
                    }
                }
                operationsIn += operations.count
                peerVersions[local.uri] = received.versionVector.counts
                daemon.contribute(operations, to: local, fromPeer: self)
                return
            }
            if daemon.isOpen(local) {
                logger.warning("peer link \(id): not taking the state of \(uri) while an editor shows its empty copy; it comes again on the next link")
                return
            }
        } else if daemon.documents.count >= daemon.configuration.maximumDocuments {
            return cut("more than \(daemon.configuration.maximumDocuments) documents")
        }
        guard let document = daemon.documentForPeer(uri: uri, id: documentID, from: self) else { return }
        peerVersions[document.uri] = received.versionVector.counts
        daemon.adopt(received, into: document, fromPeer: self)
    }

    private func receiveOperations(uri: String, documentID: UInt64, payload: [UInt8]) throws {
        let operations: [ReplicatingArrayOperation<Unicode.Scalar>]
        do {
            operations = try ReplicatingArrayCoding.decode(payload, as: Unicode.Scalar.self, maximumOperations: daemon.configuration.maximumOperationsPerFrame)
        } catch {
            return cut("undecodable operations for \(uri): \(error)")
        }
        guard operations.count <= daemon.configuration.maximumOperationsPerFrame else {
            return cut("\(operations.count) operations in one frame exceeds the limit of \(daemon.configuration.maximumOperationsPerFrame)")
        }
        if daemon.documents[uri] == nil, daemon.documents.count >= daemon.configuration.maximumDocuments {
            return cut("more than \(daemon.configuration.maximumDocuments) documents")
        }
        var removed: UInt64 = 0
        for case .remove(let ranges) in operations { for range in ranges { removed &+= range.count } }
        guard removed <= 1 << 32 else { return cut("a removal of \(removed) elements is not a real edit") }
        if let violation = boundsViolation(of: operations, in: daemon.document(uri: uri, id: documentID)?.text.scalars) {
            return cut("operations of \(uri): \(violation)")
        }
        guard let document = daemon.documentForPeer(uri: uri, id: documentID, from: self) else { return }
        if isRetired(in: document) {
            // A copy that predates a retiring round: what it sends may be anchored to dropped elements.
            logger.info("peer link \(id): operations of \(uri) ignored until the peer rebases its copy")
            return
        }
        for op in operations {
            if let problem = document.text.scalars.validationError(for: op) ?? document.contentConflict(op) {
                return cut("invalid operation for \(uri): \(problem)")
            }
        }
        // Against what the earlier operations of the frame add, before any of it is applied.
        if let problem = BatchConsistency.problem(in: operations) { return cut("invalid operation for \(uri): \(problem)") }
        operationsIn += operations.count
        notePeerHas(operations, of: document.uri)
        daemon.contribute(operations, to: document, fromPeer: self)
        if document.text.scalars.pendingOperationCount > daemon.configuration.maximumBufferedOperations {
            cut("more than \(daemon.configuration.maximumBufferedOperations) operations of \(uri) wait for anchors that never arrived")
        }
    }

    // MARK: Sending

    /// Ships operations of `document` to the peer (only once the link is established).
    func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) {
        guard state == .established, !operations.isEmpty, staleAtPeer[document.uri] == nil, !isRetired(in: document) else { return }
        // The first edits of a document that was only opened when the link came up: from now on
        // the peer holds it (its tombstones wait for the peer).
        if let holder = peerReplica, document.sharing.holders[holder] == nil { daemon.markShared(document, holder: holder) }
        // Bounded frames: split long lists.
        let limit = daemon.configuration.maximumOperationsPerFrame
        var start = 0
        while start < operations.count {
            let chunk = Array(operations[start..<min(start + limit, operations.count)])
            send(.operations(uri: document.uri, documentID: document.id, payload: ReplicatingArrayCoding.encode(chunk)))
            operationsOut += chunk.count
            notePeerHas(chunk, of: document.uri)
            start += limit
        }
    }

    /// Sends where an editor is in a document (only once the link is established, and only for
    /// documents this link shares).
    func sendPresence(_ message: PresenceMessage) {
        guard state == .established, staleAtPeer[message.uri] == nil else { return }
        send(.presence(message.json))
    }

    /// Sends a stability round's wave message (only once the link is established).
    func sendStability(_ message: JSONValue) {
        guard state == .established else { return }
        send(.stability(message))
    }

    /// Disconnects a misbehaving peer, saying why (to it and to the log).
    func cut(_ reason: String) {
        guard state != .closed else { return }
        let reason = Self.displayName(reason, limit: Self.maximumReasonLength)
        logger.warning("peer link \(id): cut off: \(reason)")
        send(.bye(reason: reason))
        finish(reason)
    }

    /// Closes the link without blame (shutting down, or the peer left).
    public func close(_ reason: String) {
        guard state != .closed else { return }
        send(.bye(reason: reason))
        finish(reason)
    }

    private func finish(_ reason: String) {
        let reason = Self.displayName(reason, limit: Self.maximumReasonLength)
        state = .closed
        outbox.dropQueued()
        closeReason = reason
        logger.info("peer link \(id): closed: \(reason)")
        daemon.commit()   // what was held for durability, the goodbye included, goes out first
        closeTransport()
        daemon.peerLinkClosed(self)
        onClose?(reason)
    }
}
