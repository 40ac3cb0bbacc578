import Glibc
import Logging
import QuireProtocol
import ReplicatingTypes

/// The daemon's state and the rules that tie sessions and documents together: documents by URI,
/// editor sessions by id, and the flow of operations from whoever made them to everyone else.
///
/// Threading: not thread-safe by design. One event loop owns a daemon and calls into it for
/// every connection, so messages are handled one at a time, in arrival order per connection.
public final class Daemon {
    /// Settings fixed at start-up.
    public struct Configuration: Sendable {
        /// Daemon edits carry a text hash only for documents up to this many scalars (hashing is O(n)).
        public var hashLimit: Int
        public var maximumFrameBytes: Int
        /// JSON nested deeper than this is a parse error.
        public var maximumNestingDepth: Int
        public var serverVersion: String
        /// The secret peers prove they know; peering is refused without one.
        public var peerSecret: [UInt8]?
        /// This daemon's user, shown to peers. Unless `userNameIsExplicit`, the name the first
        /// editor gives at `initialize` replaces it.
        public var userName: String
        public var userNameIsExplicit = false
        public var maximumPeerFrameBytes = 16 << 20
        /// Before a peer has authenticated: the largest frame, how long the handshake may take
        /// (seconds), and how many links may be handshaking at once (more are refused at once).
        public var maximumHandshakeFrameBytes = 4096
        public var peerHandshakeTimeout: Double = 10
        public var maximumUnauthenticatedLinks = 16
        /// Presence messages applied per link and second, and in one burst; more wait (coalesced).
        public var presencePerSecond: Double = 200
        public var presenceBurst: Double = 400
        /// A peer that connected here must send its hello within this many seconds.
        public var peerHelloTimeout: Double = 2
        /// Incoming links from one address that may be handshaking at once.
        public var maximumHandshakesPerAddress = 4
        /// When not empty, only peers whose identity key has one of these fingerprints
        /// (`PeerIdentity.normalized`) are accepted.
        public var trustedPeerFingerprints: Set<String> = []
        /// Failed peer attempts are told to editors at most once per this many seconds; the
        /// rest in one summary.
        public var peerFailureSummaryInterval: Double = 10
        public var maximumOperationsPerFrame = 10_000
        /// Operations waiting for anchors that have not arrived; a peer that exceeds it is cut off.
        public var maximumBufferedOperations = 10_000
        /// Documents a daemon holds at most; a peer that would create more is cut off.
        public var maximumDocuments = 10_000
        /// What one peer may make this daemon hold (protocol/peer.md, *Bounds*); a peer whose
        /// frame breaks one is cut off before anything of that frame is applied, logged or relayed.
        /// Lamport counters: at most this far ahead of the document's clock here, and never past
        /// the ceiling (which leaves the local editors 2^62 counters).
        public var maximumLamportLead: UInt64 = 1 << 32
        public var maximumLamportClock: UInt64 = 1 << 62
        /// Elements (characters, removed or not) a frame may add to a document, and a document
        /// may hold in all (each costs an index entry whatever its content).
        public var maximumNewElementsPerFrame = 1 << 22
        public var maximumElementsPerDocument = 1 << 24
        /// Replicas a frame may add to a document, and a document may name in all.
        public var maximumNewReplicasPerFrame = 64
        public var maximumReplicasPerDocument = 1_024
        /// Entries of one document list (a link's first list names every shared document).
        public var maximumDocumentsPerList = 10_000
        /// Live output (edits as they are made, presence, rounds) waiting for a peer that has not
        /// read it yet; past this the link is cut, so a peer that does not read costs at most this
        /// much. Catch-up (what a peer lacks after a handshake or a repair, a document sent whole)
        /// is not counted: it is written only while fewer than `catchUpLowWaterBytes` wait, so
        /// it goes at the pace the peer reads, costing at most that plus one frame.
        public var maximumUnsentPeerBytes = 8 << 20
        public var catchUpLowWaterBytes = 1 << 20
        /// A holder of a document not linked with for longer than this (seconds) stops holding
        /// its tombstones back; it rebases onto a state when it returns.
        public var holderHorizon: Double = 30 * 24 * 3600
        /// What the texts of editor views pushed out of one document may take (`DormantViews`):
        /// bytes and views; past either the oldest go. Probes that open and leave cost memory
        /// here, never a returning editor's merge.
        public var maximumDetachedViewBytesPerDocument = 8 << 20
        public var maximumDetachedViewsPerDocument = 4_096
        /// Seconds a restarted daemon's reply to a reopen may wait for the configured peers'
        /// first catch-up of the document (`ReopenWaits`); 0 answers at once.
        public var reopenCatchUpWait: Double = 2

        public init(hashLimit: Int = 1 << 20, maximumFrameBytes: Int = 8 << 20, maximumNestingDepth: Int = 64, serverVersion: String = "0.6.0",
                    peerSecret: [UInt8]? = nil, userName: String = "quire") {
            self.peerSecret = peerSecret
            self.userName = userName
            self.hashLimit = hashLimit
            self.maximumFrameBytes = maximumFrameBytes
            self.maximumNestingDepth = maximumNestingDepth
            self.serverVersion = serverVersion
        }
    }

    public let configuration: Configuration
    let logger: Logger
    /// This daemon's own identity towards peers.
    public let replica: ReplicaID
    /// The key that signs this daemon's peer handshakes (kept in the data directory).
    public let identity: PeerIdentity
    /// The replica IDs local edits are made as, reused across sessions (`LocalReplicas`).
    let localReplicas: LocalReplicas
    private var randomBytes: (Int) -> [UInt8]
    private(set) var documents: [String: SharedDocument] = [:]
    /// How many documents the daemon holds (for the benchmark).
    public var documentCount: Int { documents.count }
    /// Editor views no session shows now, which their editors may reopen (after a restart, every
    /// view the log holds).
    let dormantViews = DormantViews()
    /// Reopens waiting for the configured peers' first catch-up (`ReopenWaits`).
    let reopenWaits = ReopenWaits()
    private(set) var sessions: [Int: EditorSession] = [:]
    private var nextSessionID = 1
    private(set) var links: [Int: PeerLink] = [:]
    /// Stability rounds under way or recently finished (which tombstones every copy has seen removed).
    let stabilityRounds = StabilityRounds()
    /// Seconds since 1970 (wall clock; tests move it): when holders were last linked with.
    public var clock: () -> Double = { Double(time(nil)) }
    /// Seconds on a monotonic clock (tests move it): rates.
    public var monotonicClock: () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
    private var nextLinkID = 1
    /// Listening and connecting for `peer/*` requests; set by the server that runs the daemon.
    public weak var transport: PeerTransport?
    /// Where documents are kept across restarts; nil keeps them in memory only.
    public let store: DocumentStore?
    /// Output (replies, daemon edits, peer frames) waiting for the store's next commit.
    private var heldOutput: [(write: ([UInt8]) -> Void, bytes: [UInt8])] = []
    private var storeFailureReported = false
    /// The name peers are shown for this daemon: `--user-name`, else the first editor's user.
    public private(set) lazy var userName = configuration.userName
    private var userNameChosen = false

    /// An editor introduced itself as `name`: the daemon takes it for peers unless
    /// `--user-name` was given or an earlier editor already named it.
    func editorNamed(_ name: String) {
        guard !configuration.userNameIsExplicit, !userNameChosen, !name.isEmpty else { return }
        userName = PeerLink.displayName(name)
        userNameChosen = true
    }

    /// Local editors' presence changes not yet sent to peers (`Daemon+Presence`).
    var pendingPresence: Set<PendingPresence> = []
    private var lastPresenceNumber = 1_000_000
    /// Numbers this daemon's presence messages; starts at the wall clock in microseconds, so a
    /// restarted daemon's messages are newer than any it sent before.
    lazy var lastPresenceSequence = UInt64(max(0, clock() * 1_000_000))

    /// - Parameter replicaSource: draws the replica IDs local edits are made as when none of
    ///   those already used fits (`LocalReplicas`); inject a counter in tests, a random source
    ///   in the daemon.
    ///   `randomBytes` draws nonces and document IDs (inject a seeded source in tests).
    ///   `store`: the data directory; its documents are loaded now, and the daemon takes its replica ID.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "quire"),
                replicaSource: @escaping () -> ReplicaID = { ReplicaID(UInt64.random(in: 1...UInt64.max)) },
                randomBytes: @escaping (Int) -> [UInt8] = { n in (0..<n).map { _ in UInt8.random(in: 0...255) } },
                store: DocumentStore? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.localReplicas = LocalReplicas(pooled: store?.loadLocalReplicas() ?? [], mint: replicaSource)
        self.randomBytes = randomBytes
        self.store = store
        self.replica = store?.replica ?? replicaSource()
        self.identity = store?.identity ?? PeerIdentity()
        dormantViews.detachedBytesLimit = configuration.maximumDetachedViewBytesPerDocument
        dormantViews.detachedCountLimit = configuration.maximumDetachedViewsPerDocument
        if let store { load(from: store) }
        localReplicas.onChange = { [unowned self] pool in self.recordLocalReplicas(pool) }
    }

    /// Takes in every document of the data directory. Names stay unique: a second document
    /// under a name already taken is kept as `name#id`, as with peers.
    private func load(from store: DocumentStore) {
        var recoveries: [UInt64: ViewRecovery] = [:]
        let loadedDocuments = store.loadDocuments(rebuildingViews: { uri, id in
            let recovery = ViewRecovery(uri: uri, replica: ReplicaID(0))
            recoveries[id] = recovery
            return recovery
        })
        for loaded in loadedDocuments {
            var uri = loaded.uri
            if documents[uri] != nil { uri = "\(loaded.uri)#\(String(loaded.id, radix: 16))" }
            let document = SharedDocument(uri: uri, id: loaded.id, text: loaded.text)
            document.file = loaded.binding
            document.everShared = loaded.shared
            document.sharing = loaded.sharing
            document.appliedEditIDs = loaded.editIDs
            documents[uri] = document
            let views = recoveries[loaded.id]?.views ?? []
            for view in views { _ = dormantViews.keep(view, of: loaded.id) }
            for view in recoveries[loaded.id]?.detached ?? [] { _ = dormantViews.keepDetached(view, of: loaded.id) }
            if let recovery = recoveries[loaded.id], recovery.damaged > 0 {
                logger.warning("document \(uri): \(recovery.damaged) editor views in its snapshot are unreadable (\(recovery.damage ?? "")); those editors' reopens merge as text")
            }
            logger.info("document \(uri) loaded: \(loaded.text.count) characters, \(loaded.operationCount) logged operations replayed, \(views.count) editor views kept")
        }
    }

    /// A new view's durable name: random, so a returning editor cannot take another's view by guessing.
    func makeViewID() -> String {
        Hex.encode(randomBytes(12))
    }

    /// Logs what happened to an editor's view of `document`.
    func log(_ event: ViewEvent, of document: SharedDocument) {
        store?.append(event, toDocument: document.id)
    }

    /// Keeps `view` of `document` for its editor's return, logging the closing of any view that
    /// has to go to make room.
    /// Keeps `view` of `document` for its editor's return. A kept view pushed out by newer ones
    /// keeps its texts (detached): its editor's reopen still merges as text, with nothing asked.
    func keepDormant(_ view: EditorView, of document: SharedDocument) {
        for evicted in dormantViews.keep(view, of: document.id) { detach(evicted, of: document) }
    }

    /// Keeps only the texts of the kept views of `document` that `shouldGo` picks (every one by
    /// default): their elements are going, and their editors' reopens merge as text against
    /// what they showed (`DetachedView`).
    func detachDormantViews(of document: SharedDocument, where shouldGo: (EditorView) -> Bool = { _ in true }) {
        for view in dormantViews.removeAll(of: document.id, where: shouldGo) { detach(view, of: document) }
    }

    /// `view` (no longer kept whole) as its texts; the oldest detached views beyond the limit go.
    private func detach(_ view: EditorView, of document: SharedDocument) {
        log(.detached(view: view.id), of: document)
        for gone in dormantViews.keepDetached(DetachedView(detaching: view), of: document.id) {
            log(.closed(view: gone.id), of: document)
        }
    }

    private func randomID() -> UInt64 {
        randomBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A new editor session whose outgoing messages go to `send`.
    public func makeSession(send: @escaping (Message) -> Void) -> EditorSession {
        let session = EditorSession(id: nextSessionID, daemon: self, send: send)
        nextSessionID += 1
        sessions[session.id] = session
        logger.info("editor session \(session.id) started")
        return session
    }

    /// Forgets a session whose connection closed; its cursors disappear from other editors.
    public func endSession(_ session: EditorSession) {
        // An editor that shut down cleanly closed its documents for good; one whose connection
        // just ended may come back (a daemon it reaches again, a reopened bridge) and reopen them.
        for uri in session.openDocuments {
            if session.state != .shutDown, let view = session.view(of: uri), let document = documents[uri] {
                keepDormant(view, of: document)
            }
            close(uri, in: session, forGood: session.state == .shutDown)
        }
        sessions[session.id] = nil
        logger.info("editor session \(session.id) ended")
        sendPendingPresence()   // peers' editors stop showing its cursors now
        commit()
    }

    /// The number editors here know an editor of another daemon by (above every session id).
    func nextPresenceNumber() -> Int {
        lastPresenceNumber += 1
        return lastPresenceNumber
    }

    // MARK: Documents

    func document(_ uri: String) -> SharedDocument? { documents[uri] }

    /// The local copy of a peer's document `uri` with `id`, if there is one (under `uri`, or
    /// under `uri#id` when the name was taken by another document).
    func document(uri: String, id: UInt64) -> SharedDocument? {
        if let document = documents[uri], document.id == id { return document }
        if let renamed = documents["\(uri)#\(String(id, radix: 16))"], renamed.id == id { return renamed }
        return nil
    }

    /// Whether an editor session shows `document`.
    func isOpen(_ document: SharedDocument) -> Bool {
        sessions.values.contains { $0.view(of: document.uri) != nil }
    }

    /// Takes a whole state a peer sent as `document` (an empty copy no editor shows), keeps it
    /// (a snapshot at once: no log of operations can rebuild it) and passes it on to the other
    /// peers.
    func adopt(_ state: ReplicatingText, into document: SharedDocument, fromPeer origin: PeerLink) {
        document.adopt(state)
        detachDormantViews(of: document)
        markShared(document, holder: origin.peerReplica)
        store?.adopt(document.text, forDocument: document.id)
        logger.info("document \(document.uri) taken whole from peer link \(origin.id): \(state.count) characters")
        for link in links.values where link !== origin { link.sendWhole(document) }
    }

    /// The document `uri`, created with `makeText()` when this daemon does not have it yet; a new
    /// document is announced to every peer at once. Throws `documentTooLarge`, creating nothing,
    /// when the new text holds more elements than a document may (`ElementRoom`).
    func openDocument(_ uri: String, creatingWith makeText: () -> ReplicatingText) throws(ResponseError) -> (SharedDocument, created: Bool) {
        if let existing = documents[uri] { return (existing, false) }
        let text = makeText()
        try ElementRoom(uri: uri, held: 0, limit: configuration.maximumElementsPerDocument)
            .check(adding: Int(clamping: text.scalars.claimedElementCount))
        let document = SharedDocument(uri: uri, id: randomID(), text: text)
        documents[uri] = document
        store?.create(uri: uri, id: document.id, initial: document.text.operations())
        logger.info("document \(uri) created with \(document.text.count) characters")
        for link in links.values {
            link.announce(document)
            link.sendOperations(document.text.operations(), of: document)
        }
        return (document, true)
    }

    /// `forGood`: the editor closed it (its view is logged as closed), rather than going away.
    func close(_ uri: String, in session: EditorSession, forGood: Bool = true) {
        let view = session.view(of: uri)
        session.forgetView(uri)
        guard let document = documents[uri] else { return }
        if forGood, let view { log(.closed(view: view.id), of: document) }
        if document.selections.removeValue(forKey: session.id) != nil {
            broadcastSelections(of: session, in: document)
        }
        // A rebase that waited for the last editor to close it can go ahead now.
        if !isOpen(document) {
            for link in links.values where link.state == .established { link.retryRebase(of: document) }
        }
    }

    /// Operations `session` made in `document`: into the document, then queued for every other
    /// session that has it open. Sent at the next `flush()`.
    /// `editID` names the editor edit they make up: it is kept with them (`SharedDocument.appliedEditIDs`).
    /// `edit`: the view the editor made them in, and the epoch and daemon revision its edit was
    /// based on; logged with them, so recovery rebuilds the view (even for an edit with no operations).
    /// Throws `documentTooLarge`, changing nothing, when they would take the document past the
    /// elements a document may hold: this and `contributeFromOutside` are the one path by which
    /// local operations reach a document, so every local edit is held to the bound peers hold
    /// it to. Callers change nothing of their own (views, undo histories) before this returned.
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, from session: EditorSession,
                    editID: String? = nil, edit: (view: EditorView, epoch: Int, revision: Int)? = nil) throws(ResponseError) {
        try checkLocalGrowth(operations, of: document)
        if let editID, !operations.isEmpty { document.appliedEditIDs.insert(editID) }
        if let edit {
            store?.append(.edited(view: edit.view.id, epoch: edit.epoch, revision: edit.revision), toDocument: document.id,
                          editID: editID, operations: operations)
        }
        distribute(operations, to: document, exceptSession: session, editID: editID, logged: edit != nil)
        stabilityRounds.editorsMoved = true   // an editor view may have caught up
    }

    /// Operations that came from outside every editor and peer (a file changed on disk, an
    /// undo): into the document, to every session that has it open, and to every peer. Throws
    /// `documentTooLarge`, changing nothing, as `contribute` does.
    func contributeFromOutside(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument) throws(ResponseError) {
        try checkLocalGrowth(operations, of: document)
        distribute(operations, to: document)
    }

    /// Applies `operations` to `document`, logs them, and queues them for every session that has
    /// it open and every peer, but the ones they came from.
    private func distribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument,
                            exceptSession origin: EditorSession? = nil, exceptLink originLink: PeerLink? = nil, editID: String? = nil,
                            logged: Bool = false) {
        guard !operations.isEmpty else { return }
        document.apply(operations)
        record(operations, of: document, exceptSession: origin, exceptLink: originLink, editID: editID, logged: logged)
    }

    /// Logs operations already applied to `document` (unless `logged`: recorded with their view
    /// already) and queues them for every session that has it open and every peer, but the ones
    /// they came from.
    private func record(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument,
                        exceptSession origin: EditorSession? = nil, exceptLink originLink: PeerLink? = nil, editID: String? = nil,
                        logged: Bool = false) {
        guard !operations.isEmpty else { return }
        if !logged { store?.append(operations, toDocument: document.id, editID: editID) }
        for session in sessions.values where session !== origin { session.view(of: document.uri)?.enqueue(operations) }
        for link in links.values where link !== originLink { link.sendOperations(operations, of: document) }
    }

    // MARK: Peers

    /// A new link to a peer over a byte stream; call `start()` once the stream is up.
    /// Throws when no secret (or one shorter than `PeerSecret.minimumMaterialBytes`) is
    /// configured: unauthenticated peering is never allowed.
    /// `incoming`: the peer connected to us (a listener, or `quire peer --stdio`); this side
    /// accepts, and shows nothing that depends on the secret before the peer proved it.
    /// Incoming handshake slots (`maximumUnauthenticatedLinks` in all, `maximumHandshakesPerAddress`
    /// per `remoteHost`) are refused when full, except that a host that authenticated here before
    /// takes the slot of the oldest handshake from a host that never did; links this daemon
    /// starts itself are not counted, so strangers cannot stop it reconnecting to its peers.
    public func makePeerLink(write: @escaping ([UInt8]) -> Void, close: @escaping () -> Void, incoming: Bool = true,
                             remoteHost: String? = nil) throws -> PeerLink {
        guard let secret = configuration.peerSecret, !secret.isEmpty else { throw PeeringError.noSecret }
        guard secret.count >= PeerSecret.minimumMaterialBytes else { throw PeeringError.weakSecret }
        if incoming {
            let handshaking = links.values.filter { $0.state == .handshaking && $0.isIncoming }.sorted { $0.id < $1.id }
            let known = remoteHost.map { authenticatedHosts.contains($0) } ?? false
            if let host = remoteHost {
                let fromHost = handshaking.filter { $0.remoteHost == host }
                if fromHost.count >= configuration.maximumHandshakesPerAddress {
                    peerAttemptFailed(reason: "refused: \(fromHost.count) handshakes from \(host) already under way", link: nil)
                    throw PeeringError.tooManyHandshakesFrom(host, fromHost.count)
                }
            }
            if handshaking.count >= configuration.maximumUnauthenticatedLinks {
                let stranger = handshaking.first { link in !(link.remoteHost.map { authenticatedHosts.contains($0) } ?? false) }
                if known, let stranger {
                    stranger.cut("handshake slot given to \(remoteHost ?? "?"), which authenticated here before")
                } else {
                    peerAttemptFailed(reason: "refused: \(handshaking.count) handshakes already under way", link: nil)
                    throw PeeringError.tooManyHandshakes(handshaking.count)
                }
            }
        }
        let link = PeerLink(id: nextLinkID, daemon: self, secret: secret, nonce: randomBytes(32), write: write, close: close)
        link.isIncoming = incoming
        link.remoteHost = remoteHost
        nextLinkID += 1
        links[link.id] = link
        return link
    }

    /// Hosts that peers authenticated from (most recent last, at most 256): their new connections
    /// are favoured for handshake slots.
    private var authenticatedHosts: [String] = []

    func peerLinkEstablished(_ link: PeerLink) {
        if let host = link.remoteHost {
            authenticatedHosts.removeAll { $0 == host }
            authenticatedHosts.append(host)
            if authenticatedHosts.count > 256 { authenticatedHosts.removeFirst() }
        }
        announce(link, event: "joined", reason: nil)
    }

    func peerLinkClosed(_ link: PeerLink) {
        links[link.id] = nil
        dropPresence(via: link)
        stabilityLinkClosed(link)
        // The last time this daemon was linked with that holder (the horizon counts from here).
        if let holder = link.peerReplica, link.wasEstablished {
            for document in documents.values where document.sharing.holders[holder] != nil { markShared(document, holder: holder) }
        }
        guard link.wasEstablished else { return peerAttemptFailed(reason: link.closeReason ?? "closed", link: link) }
        let leftOnPurpose = ["the peer", "shutting", "disconnected by an editor"]
        announce(link, event: link.closeReason.map { reason in leftOnPurpose.contains { reason.hasPrefix($0) } ? "left" : "failed" } ?? "left",
                 reason: link.closeReason)
    }

    /// Tells every editor that a peer joined, left or failed (`peer/changed`).
    private func announce(_ link: PeerLink, event: String, reason: String?) {
        logger.info("peer link \(link.id) \(event)\(reason.map { ": \($0)" } ?? "")")
        for session in sessions.values {
            session.sendPeerChange(link: link.id, event: event, user: link.peerUser ?? "", address: link.address, reason: reason)
        }
    }

    /// Failed attempts (never-authenticated links, refused connections) within one interval.
    private var failedAttempts: (since: Double, reasons: [String: Int])?

    /// A link that never authenticated closed, or a connection was refused: editors hear of the
    /// first of an interval at once and of the rest in one summary when it ends, so a flood of
    /// attempts costs them one notification per interval.
    private func peerAttemptFailed(reason: String, link: PeerLink?) {
        logger.warning("peer attempt failed\(link.map { " (link \($0.id), \($0.address))" } ?? ""): \(reason)")
        let now = clock()
        if let window = failedAttempts, now - window.since < configuration.peerFailureSummaryInterval {
            failedAttempts?.reasons[Self.failureKind(reason), default: 0] += 1
            return
        }
        tellFailureSummary()
        failedAttempts = (now, [:])
        for session in sessions.values {
            session.sendPeerChange(link: link?.id ?? 0, event: "failed", user: link?.peerUser ?? "", address: link?.address ?? "", reason: reason)
        }
    }

    /// Sends the summary of the attempts not told one by one, once their interval is over.
    private func tellFailureSummary(now: Double? = nil) {
        guard let window = failedAttempts else { return }
        if let now, now - window.since < configuration.peerFailureSummaryInterval { return }
        failedAttempts = nil
        let count = window.reasons.values.reduce(0, +)
        guard count > 0 else { return }
        let kinds = window.reasons.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
        let summary = "\(count) more peer attempt\(count == 1 ? "" : "s") failed within \(Int(configuration.peerFailureSummaryInterval)) seconds: \(kinds)"
        logger.warning("\(summary)")
        for session in sessions.values { session.sendPeerChange(link: 0, event: "failed", user: "", address: "", reason: summary) }
    }

    /// What kind of failure `reason` is, for summaries: its words before the first colon.
    private static func failureKind(_ reason: String) -> String {
        String(reason.prefix { $0 != ":" }.prefix(60))
    }

    /// Heartbeats for every link; the server calls it every `interval` seconds.
    public func tickPeers(now: Double, interval: Double) {
        for link in links.values.sorted(by: { $0.id < $1.id }) { link.tick(now: now, interval: interval) }
        for link in links.values.sorted(by: { $0.id < $1.id }) where link.state == .established { link.sendDueDigests() }
        applyQueuedPresence()
        tellFailureSummary(now: clock())
        tickStabilityRounds()
    }

    /// The live links (for benchmarks and status).
    public var linksForBenchmark: [PeerLink] { links.values.sorted { $0.id < $1.id } }

    /// Closes every peer link (the daemon is exiting).
    public func closeAllPeers() {
        for link in links.values { link.close("shutting down") }
    }

    /// Operations a peer sent: only those this daemon did not have go into the document, to the
    /// editors that have it open, and on to every other peer (so chains and meshes converge
    /// without echoes). Each is judged against the state the earlier ones of the batch left, so
    /// an insertion and the removal of what it inserted both go in and on. Sent to editors at
    /// the next `flush()`.
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, fromPeer origin: PeerLink) {
        record(document.applyNew(operations), of: document, exceptLink: origin)
    }

    /// The local document a peer's document `uri` with `id` maps to, created when new. Two
    /// documents created independently under one name are kept apart: the peer's is stored as
    /// `uri#id` (protocol/peer.md), never merged into ours.
    /// `theirsIsEmpty`: the peer listed its copy with no edits (an editor there just opened the
    /// name). Two such copies settle on the smaller ID; an empty copy here joins any other.
    /// Nil: ignore the peer's copy (it is empty and will join ours).
    func documentForPeer(uri: String, id: UInt64, from link: PeerLink, theirsIsEmpty: Bool = false) -> SharedDocument? {
        var name = uri
        if let existing = documents[uri] {
            if existing.id == id {
                if let holder = link.peerReplica, existing.sharing.holders[holder] == nil { markShared(existing, holder: holder) }
                return existing
            }
            if existing.isPristine, !theirsIsEmpty || id < existing.id {
                // An editor opened the name before the peer's copy arrived: it joins the peer's
                // document instead of starting a second one (its view is empty either way).
                logger.info("peer link \(link.id): \(uri) here was empty and new; it becomes the peer's document")
                store?.discard(documentID: existing.id)
                let joined = SharedDocument(uri: uri, id: id, text: ReplicatingText(replica: replica))
                joined.selections = existing.selections
                documents[uri] = joined
                store?.create(uri: uri, id: id, initial: [])
                // The views of it go on in the joined document's log (both are empty here).
                for session in sessions.values.sorted(by: { $0.id < $1.id }) {
                    if let view = session.view(of: uri) { log(.opened(view: view.id), of: joined) }
                }
                _ = dormantViews.removeAll(of: existing.id)
                markShared(joined, holder: link.peerReplica)
                return joined
            }
            if theirsIsEmpty { return nil }
            name = "\(uri)#\(String(id, radix: 16))"
            if let renamed = documents[name] { return renamed }
            logger.warning("peer link \(link.id): document \(uri) exists here with another history; keeping the peer's as \(name)")
            for session in sessions.values {
                session.sendDocumentForked(uri: uri, copy: name, user: link.peerUser, address: link.address)
            }
        }
        let document = SharedDocument(uri: name, id: id, text: ReplicatingText(replica: replica))
        documents[name] = document
        store?.create(uri: name, id: id, initial: [])
        markShared(document, holder: link.peerReplica)
        return document
    }

    /// A description of a count in `vector` for one of this daemon's own replicas that exceeds
    /// what `document` holds: edits that were never made.
    func impossibleClaim(in vector: VersionVector, for document: SharedDocument) -> String? {
        let have = document.text.versionVector
        for (replica, count) in vector.counts where localReplicas.own.contains(replica) && count > have[replica] {
            return "\(count) edits of replica \(replica) claimed, \(have[replica]) made"
        }
        return nil
    }

    /// Sends every session the daemon edits it is owed. Called after each incoming message
    /// (after its reply), so several remote operations become one edit.
    public func flush() {
        peersProgressed()   // a held reopen may go now (`ReopenWaits`)
        applyQueuedPresence()
        for session in sessions.values.sorted(by: { $0.id < $1.id }) { session.sendPendingEdits() }
        sendPendingPresence()
        if stabilityRounds.editorsMoved, !stabilityRounds.active.isEmpty { recheckStabilityRounds() }
        stabilityRounds.editorsMoved = false
    }

    // MARK: Durability

    /// `write`, held back while the store has edits not yet on stable storage (`.sync`
    /// durability), so that no editor or peer hears of an edit a crash could still take back.
    /// Held bytes go out in their original order at the next `commit()`.
    func gated(_ write: @escaping ([UInt8]) -> Void) -> ([UInt8]) -> Void {
        { [unowned self] bytes in
            if self.heldOutput.isEmpty && !(self.store?.holdsOutput ?? false) {
                write(bytes)
            } else {
                self.heldOutput.append((write, bytes))
            }
        }
    }

    /// The end of a read from an editor or peer (and before an exit): under `.sync`
    /// durability makes everything logged so far durable; then sends the output that waited for
    /// it and folds long logs into snapshots.
    public func commit() {
        guard let store else { return }
        if store.durability == .sync { store.commit() }
        finishCommit(store)
    }

    /// Makes everything logged so far durable whatever the durability (the `.batch` timer and
    /// shutdown call it).
    public func syncStorage() {
        guard let store else { return }
        store.commit()
        finishCommit(store)
    }

    /// Sends the output that waited for the commit, folds long logs into snapshots, and tells
    /// editors once if the store failed.
    private func finishCommit(_ store: DocumentStore) {
        let output = heldOutput
        heldOutput = []
        for (write, bytes) in output { write(bytes) }
        store.snapshotDueDocuments(withViews: { id in snapshotText(ofDocument: id) })
        if let failure = store.failure, !storeFailureReported {
            storeFailureReported = true
            forgetReplicaPool(of: store)
            for session in sessions.values.sorted(by: { $0.id < $1.id }) { session.showError("Quire \(failure)") }
        }
    }

    /// The state a snapshot of document `id` keeps. A document no peer ever held first drops
    /// the tombstones nothing on this daemon refers to (protocol/decisions/tombstones.md).
    private func snapshotText(ofDocument id: UInt64) -> (text: ReplicatingText, views: [[UInt8]])? {
        guard let document = documents.values.first(where: { $0.id == id }) else { return nil }
        if document.everShared {
            // Tombstones go once a round shows every holder has seen them removed; the next
            // snapshot leaves them out.
            startStabilityRound(document)
        } else {
            dropTombstones(of: document)
        }
        let views = sessions.values.sorted { $0.id < $1.id }.compactMap { $0.view(of: document.uri) } + dormantViews.views(of: id)
        let states = views.map { $0.encodedState() } + dormantViews.detachedViews(of: id).map { $0.encodedState() }
        #if DEBUG
        // What recovery will read must read back: a view that does not is an editor whose reopen fails.
        let check = ViewRecovery(uri: document.uri, replica: ReplicaID(0))
        check.restore(states, document: document.text)
        if check.damaged > 0 { logger.error("document \(document.uri): a view state written to its snapshot does not read back: \(check.damage ?? "")") }
        #endif
        return (document.text, states)
    }

    /// Drops the tombstones of `document` that no copy on this daemon can still refer to: not
    /// shown by an editor's view (whose next edit may be anchored to them), not in an undo
    /// history, not the base of its file, not under a selection.
    func dropTombstones(of document: SharedDocument) {
        let dropped = document.dropTombstones(keeping: localReferences(of: document))
        if dropped > 0 {
            logger.info("document \(document.uri): dropped \(dropped) removed characters no copy refers to any more")
        }
    }

    /// What on this daemon may still refer to elements of `document`: editor views, undo
    /// histories, the file base and selections. Removed ones among them stay stored.
    func localReferences(of document: SharedDocument) -> [ElementIDRange] {
        var keep = document.selectionAnchors
        for session in sessions.values { keep += session.referencedIDs(in: document.uri) }
        keep += dormantViews.referencedIDs(of: document.id)
        if let base = document.file?.base { keep += base.scalars.visibleIDs }
        return keep
    }

    /// Notes that the peer daemon `holder` now holds `document`: from now on its tombstones go
    /// only when a stability round reaches every holder (protocol/decisions/tombstones.md).
    /// `change` edits the rest of its sharing record first; the record is written once, if it
    /// changed.
    func markShared(_ document: SharedDocument, holder: ReplicaID?, change: (inout DocumentSharing) -> Void = { _ in }) {
        let before = document.sharing
        change(&document.sharing)
        if let holder { document.sharing.heard(from: holder, at: clock()) }
        guard !document.everShared || document.sharing != before else { return }
        document.everShared = true
        store?.recordSharing(document.sharing, forDocument: document.id)
    }

    /// Records `document`'s sharing after a change made in place.
    func recordSharing(of document: SharedDocument) {
        store?.recordSharing(document.sharing, forDocument: document.id)
    }

    // MARK: Selections

    func broadcastSelections(of session: EditorSession, in document: SharedDocument) {
        for other in sessions.values where other !== session {
            other.sendSelections(of: session.id, in: document)
        }
        localPresenceChanged(session: session.id, in: document)
    }

    /// Every session's selections in `document`, for a session that just opened it.
    func sendAllSelections(in document: SharedDocument, to session: EditorSession) {
        for id in document.selections.keys.sorted() where id != session.id {
            session.sendSelections(of: id, in: document)
        }
        sendPeerPresence(in: document, to: session)
    }

    // MARK: Status

    var documentList: [ListDocumentsRequest.Entry] {
        documents.values.sorted { $0.uri < $1.uri }.map { document in
            ListDocumentsRequest.Entry(uri: document.uri, lines: document.text.lineCount, characters: document.text.count,
                                       openInSessions: sessions.values.filter { $0.view(of: document.uri) != nil }.count)
        }
    }
}

/// Why a peer link could not be made.
public enum PeeringError: Error, CustomStringConvertible {
    case noSecret
    case weakSecret
    case tooManyHandshakes(Int)
    case tooManyHandshakesFrom(String, Int)

    public var description: String {
        switch self {
        case .noSecret: return "peering needs a shared secret: set QUIRE_SECRET or pass --secret-file"
        case .weakSecret: return "the peer secret is too short (fewer than \(PeerSecret.minimumMaterialBytes) bytes): run `quire secret` for one"
        case .tooManyHandshakes(let count): return "\(count) peer handshakes are already under way"
        case .tooManyHandshakesFrom(let host, let count): return "\(count) peer handshakes from \(host) are already under way"
        }
    }
}
