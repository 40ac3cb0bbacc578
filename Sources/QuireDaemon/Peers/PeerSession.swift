import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// What a peer session needs of the link under it: who the peer is (`PeerEndpoint`), and a way
/// to send frames, to queue catch-up paced to what the peer reads, and to cut the link.
protocol PeerSessionLink: PeerEndpoint {
    func send(_ frame: PeerFrame)
    func queueCatchUp(_ catchUp: CatchUp)
    /// Whether output (live or catch-up) waits in the link's queue.
    var hasQueuedOutput: Bool { get }
}

/// The document side of a peer link, above its `SecureChannel`: document lists, delta sync,
/// whole states, rebase onto a peer's state, validation of the operations a peer sends, presence
/// as it arrives, and repair by digests (`PeerSession+Digests`). It sees only authenticated,
/// decoded messages (`PeerMessage`), reaches the daemon through `PeerHost` and its link through
/// `PeerSessionLink`, so its rules are tested with no socket and no crypto (`PeerSessionTests`).
///
/// Guarantees: a frame is validated whole (bounds, anchors, content, the batch against itself)
/// before any of it is applied, logged or relayed; a peer that breaks a rule is cut with a reason.
final class PeerSession {
    unowned let daemon: any PeerHost
    unowned let link: any PeerSessionLink
    var operationsIn = 0
    var operationsOut = 0
    private var sentDocuments = false
    /// Editors' presence one read may hold waiting (distinct documents and origins); more cuts the link.
    static let maximumQueuedPresence = 4096

    init(daemon: any PeerHost, link: any PeerSessionLink) {
        self.daemon = daemon
        self.link = link
    }

    var id: Int { link.id }
    var state: PeerLinkState { link.state }
    var peerReplica: ReplicaID? { link.peerReplica }
    var peerUser: String? { link.peerUser }
    var logger: Logger { daemon.logger }
    func send(_ frame: PeerFrame) { link.send(frame) }
    func cut(_ reason: String) { link.cut(reason) }
    func queueCatchUp(_ catchUp: CatchUp) { link.queueCatchUp(catchUp) }

    /// What the peer is known to have, per document: from its document list, plus every
    /// operation sent to it or received from it. Drives `behind`.
    /// (See also `staleAtPeer`.)
    var peerVersions: [String: [ReplicaID: UInt64]] = [:]
    /// Documents whose copy here predates a retiring round on the peer, with the peer's epochs:
    /// nothing of them goes out on this link until the peer's state arrived and this copy rebased.
    var staleAtPeer: [String: Set<String>] = [:]
    /// The epochs `staleAtPeer` holds in all (at most `maximumStaleEpochsPerLink`).
    var staleEpochCount = 0
    /// What the peer held when the link came up, for reopens that wait for it (`FirstCatchUp`).
    var firstCatchUp = FirstCatchUp()
    /// Presence the peer sent and this daemon has not applied yet: the newest per document and
    /// origin, in arrival order (`PresenceService.applyQueued`).
    private var queuedPresence: [String: PresenceMessage] = [:]
    private var queuedPresenceOrder: [String] = []
    /// Presence messages this link may still have applied now (a token bucket, refilled at
    /// `Configuration.presencePerSecond` up to `presenceBurst`), and when it was last refilled.
    private var presenceTokens: Double?
    private var presenceRefilledAt = 0.0
    private var toldRefusedPresence = false
    /// Documents (and trees) whose changes from this peer were refused for its role, each logged once.
    var refusedWrites: Set<String> = []

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

    /// Digest rounds on this link: what to ask about, what to answer (`PeerSession+Digests`).
    var digests = DigestExchange()
    /// Elements (characters and tombstones) this daemon has and the peer is not known to have.
    public var behind: Int {
        var total: UInt64 = 0
        for (uri, document) in daemon.documents where carries(uri) {
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

    // MARK: Frames

    func handle(_ frame: PeerFrame) throws {
        let decoded: PeerMessage?
        do { decoded = try PeerMessage.decode(frame, limits: daemon.configuration) } catch { return cut(error.description) }
        guard let message = decoded else { return }   // the secure channel's (never delivered)
        if let violation = scopeViolation(of: message) { return cut(violation) }
        digests.noteReceived(frame)
        switch message {
        case .documents(let list):
            try sendWhatTheyLack(list)
            noteFirstList(list)
        case .operations(let uri, let documentID, let payload):
            try receiveOperations(uri: uri, documentID: documentID, payload: payload)
        case .state(let uri, let documentID, let payload):
            receiveState(uri: uri, documentID: documentID, payload: payload)
        case .stability(let message):
            daemon.receiveStability(message, from: link)
        case .presence(let message):
            guard queuePresence(message) else {
                return cut("more than \(Self.maximumQueuedPresence) editors' presence waiting in one read")
            }
        case .digest(let message):
            receiveDigest(message)
        case .project(let key, let payload):
            receiveProject(key: key, payload: payload)
        case .heartbeat:
            break
        }
    }

    func sendDocumentList() {
        guard !sentDocuments else { return }
        sentDocuments = true
        // A document an editor only opened (no edit yet) is listed but not yet shared: a peer's
        // document of the same name may still take its place.
        let carried = daemon.documents.values.filter { carries($0.uri) }.sorted { $0.uri < $1.uri }
        // A deleted file's document is listed (a peer that holds it too syncs it as before) but
        // the peer is not taken for a holder of it: one that lacks it does not take it
        // (`forgotten(_:)`), and need not be waited for before it is forgotten.
        for document in carried where !document.isPristine && !daemon.isDeletedFile(document.uri) {
            daemon.markShared(document, holder: peerReplica)
        }
        send(.documents(["initial": true, "documents": .array(carried.map(entry))]))
    }

    /// Tells the peer about a document created here after the link came up, so that an editor
    /// opening that name on the other side joins it instead of starting an unrelated one.
    func announce(_ document: SharedDocument) {
        guard state == .established, carries(document.uri) else { return }
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
            if forgotten(uri) { continue }
            if let local = daemon.documents[uri], local.id == id, let claim = daemon.impossibleClaim(in: vector, for: local) {
                return cut("version vector from the future: \(claim)")
            }
            if daemon.documents[uri] == nil, daemon.documents.count >= daemon.configuration.maximumDocuments {
                return cut("more than \(daemon.configuration.maximumDocuments) documents")
            }
            // A peer that may not write makes no copy here: only ours it lacks go to it.
            let mayCreate = writeRefusal == nil || daemon.document(uri: uri, id: id) != nil
            guard mayCreate || mayChange(uri, what: "a document list entry") else { continue }
            // A copy made for the entry (not one joining an empty copy here) must fit the quota.
            if daemon.document(uri: uri, id: id) == nil, let violation = documentQuotaViolation(uri: uri),
               daemon.documents[uri].map({ !$0.isPristine && !vector.counts.isEmpty }) ?? true {
                return cut(violation)
            }
            guard let document = daemon.documentForPeer(uri: uri, id: id, from: link, theirsIsEmpty: vector.counts.isEmpty) else { continue }
            listed.insert(document.uri)
            // A copy made from this first list: its first catch-up is over once what the peer
            // listed has arrived (a joined project writes the file only then).
            if list.initial, document.id == id, firstCatchUp.listed[document.uri] == nil, writeRefusal == nil {
                firstCatchUp.listed[document.uri] = vector
            }
            let epochs = entry.epochs
            if entry.rebase, document.id == id, !epochs.isEmpty, !epochs.isSubset(of: document.sharing.epochs) {
                // Our copy predates a retiring round there: nothing goes out until we rebased onto its state.
                let held = staleEpochCount - (staleAtPeer[document.uri]?.count ?? 0) + epochs.count
                let limit = daemon.configuration.maximumStaleEpochsPerLink
                guard held <= limit else { return cut("more than \(limit) epochs of documents to rebase named on one link") }
                staleEpochCount = held
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
            // Only the replicas this copy holds matter (`behind`): a peer's claims of others are not kept.
            if document.id == id { peerVersions[document.uri] = counts.filter { document.text.versionVector.counts[$0.key] != nil } }
            // Sent at the pace the peer reads (what it lacks may be the whole document).
            queueCatchUp(CatchUp(document, .lacking(since: document.id == id ? vector : VersionVector(),
                                                    theyHaveNothing: vector.counts.isEmpty, announceIfNothing: false)))
            // Who is where in it, after the text those places are anchored to.
            for message in daemon.presenceMessages(of: document, for: link) { sendPresence(message) }
            // A later announcement of something we lack: say what we have, so the peer sends the rest.
            if !list.initial, document.id == id, !document.text.versionVector.dominates(vector) { announce(document) }
        }
        guard list.initial else { return }
        // A deleted file's document the peer lacks is not sent: it would not take it.
        for document in daemon.documents.values.sorted(by: { $0.uri < $1.uri })
        where !listed.contains(document.uri) && carries(document.uri) && !daemon.isDeletedFile(document.uri) {
            sendWhole(document)
        }
    }

    /// Whether a peer's copy of document `uri` is not taken in: none is held here under that name
    /// and this daemon's project tree holds its file deleted (it was forgotten, or its file was
    /// deleted before it came). Its file coming back (a later tree operation) makes it taken again.
    /// protocol/decisions/project-tree.md, *Forgetting a deleted file's document*.
    func forgotten(_ uri: String) -> Bool {
        daemon.documents[uri] == nil && daemon.isDeletedFile(uri)
    }

    // MARK: Sending

    /// Ships operations of `document` to the peer (only once the link is established).
    func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) {
        guard state == .established, !operations.isEmpty, carries(document.uri), staleAtPeer[document.uri] == nil, !isRetired(in: document) else { return }
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
        guard state == .established, carries(message.uri), staleAtPeer[message.uri] == nil else { return }
        send(.presence(message.json))
    }

    /// Sends a stability round's wave message (only once the link is established, and only for
    /// a document of the link's scope).
    func sendStability(_ message: JSONValue) {
        guard state == .established, let uri = message["uri"]?.stringValue, carries(uri) else { return }
        send(.stability(message))
    }
}
