import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// Presence across daemons: every editor's cursors and selections, with its user's name and
/// colour, reach the editors of every daemon that holds the document, relayed through chains,
/// placed in each receiver's own view, and cleared when the editor or the link they came by goes.
/// Presence of a document goes only on links that carry it (of its scope).
///
/// Rate: an editor's cursor updates of one read go out as one `presence` frame per link (the
/// latest), so typing costs at most one small frame per keystroke and bursts cost one.
/// May call: the documents (`DocumentLookup`), the editors and the peer links.
final class PresenceService {
    private let logger: Logger
    /// Editors' presence (per document) one link may have brought here in all, across documents
    /// (`Configuration.maximumPeerPresencesPerLink`).
    private let maximumPerLink: Int
    private let replica: ReplicaID
    private let clock: DaemonClock
    private unowned let documentLookup: any DocumentLookup
    private unowned let sessionRegistry: SessionRegistry
    private unowned let peerLinks: PeerLinks
    /// Local editors' presence changes not yet sent to peers.
    private var pendingPresence: Set<PendingPresence> = []
    private var lastPresenceNumber = 1_000_000
    /// Numbers this daemon's presence messages; starts at the wall clock in microseconds, so a
    /// restarted daemon's messages are newer than any it sent before.
    private lazy var lastPresenceSequence = UInt64(max(0, clock.wall() * 1_000_000))

    init(logger: Logger, maximumPerLink: Int, replica: ReplicaID, clock: DaemonClock, documents: any DocumentLookup, sessions: SessionRegistry,
         links: PeerLinks) {
        self.logger = logger
        self.maximumPerLink = maximumPerLink
        self.replica = replica
        self.clock = clock
        self.documentLookup = documents
        self.sessionRegistry = sessions
        self.peerLinks = links
    }

    private var documents: [String: SharedDocument] { documentLookup.documents }
    private var sessions: [Int: any EditorEndpoint] { sessionRegistry.sessions }
    private var links: [Int: any PeerEndpoint] { peerLinks.links }

    /// The number editors here know an editor of another daemon by (above every session id).
    private func nextPresenceNumber() -> Int {
        lastPresenceNumber += 1
        return lastPresenceNumber
    }

    /// A local session's selections in `document` changed: every other session and, at the
    /// next end of a read, every peer hears of it.
    func broadcastSelections(of session: any EditorEndpoint, in document: SharedDocument) {
        for other in sessions.values where other !== session {
            other.sendSelections(of: session.id, in: document)
        }
        localPresenceChanged(session: session.id, in: document)
    }

    /// Every session's selections in `document`, for a session that just opened it.
    func sendAllSelections(in document: SharedDocument, to session: any EditorEndpoint) {
        for id in document.selections.keys.sorted() where id != session.id {
            session.sendSelections(of: id, in: document)
        }
        sendPeerPresence(in: document, to: session)
    }

    /// The origin key of a session of this daemon.
    func presenceOrigin(of sessionID: Int) -> String { "\(replica.rawValue):\(sessionID)" }

    /// A local session's selections in `document` changed (or it left): tell peers at the next flush.
    func localPresenceChanged(session: Int, in document: SharedDocument) {
        pendingPresence.insert(PendingPresence(uri: document.uri, session: session))
    }

    /// Sends what changed since the last flush, one frame per editor and document.
    func sendPending() {
        guard !pendingPresence.isEmpty else { return }
        let pending = pendingPresence.sorted { ($0.uri, $0.session) < ($1.uri, $1.session) }
        pendingPresence.removeAll()
        let established = links.values.filter { $0.isEstablished }.sorted { $0.id < $1.id }
        guard !established.isEmpty else { return }
        for item in pending {
            guard let document = documents[item.uri] else { continue }
            let message = ownPresence(of: item.session, in: document)
            for link in established where link.carries(document.uri) { link.sendPresence(message) }
        }
    }

    /// Session `sessionID`'s presence in `document` as a message, with the next sequence number.
    private func ownPresence(of sessionID: Int, in document: SharedDocument) -> PresenceMessage {
        lastPresenceSequence += 1
        let sequence = lastPresenceSequence
        let selection = document.selections[sessionID]
        return PresenceMessage(uri: document.uri, documentID: document.id, origin: presenceOrigin(of: sessionID), sequence: sequence,
                               user: selection?.user ?? WireUser(name: ""), selections: selection?.selections ?? [])
    }

    /// Everything known of `document`'s presence, for a link that just synced it: this daemon's
    /// editors and those relayed from elsewhere (not those that came by `link` itself).
    func presenceMessages(of document: SharedDocument, for link: any PeerEndpoint) -> [PresenceMessage] {
        var messages = document.selections.keys.sorted().map { ownPresence(of: $0, in: document) }
        for (origin, presence) in document.peerPresences.sorted(by: { $0.key < $1.key })
        where presence.viaLink != link.id && !presence.selection.selections.isEmpty {
            messages.append(PresenceMessage(uri: document.uri, documentID: document.id, origin: origin, sequence: presence.sequence,
                                            user: presence.selection.user, selections: presence.selection.selections))
        }
        return messages
    }

    /// Applies what every link's peer said of presence since the last call, the newest message
    /// per editor, as far as each link's rate allows (`Configuration.presencePerSecond`); the rest
    /// waits for the next read or tick, still coalesced. Called at the end of every read.
    func applyQueued() {
        let now = clock.monotonic()
        for link in links.values.sorted(by: { $0.id < $1.id }) where link.isEstablished {
            for message in link.takeQueuedPresence(now: now) where link.isEstablished { applyPresence(message, from: link) }
        }
    }

    /// One peer's presence message: kept when it may come by `link` and is newer than what is
    /// known of its origin, shown to this daemon's editors of the document, relayed on every
    /// other link.
    ///
    /// Origins: a message about an editor of a daemon linked directly here is taken only from that
    /// daemon's own link; one about an editor further away only from the link it first came by
    /// (until that link closes). So a peer cannot speak for, spoof or mute the cursor of a daemon
    /// it does not stand between.
    private func applyPresence(_ message: PresenceMessage, from link: any PeerEndpoint) {
        guard let document = documentLookup.document(uri: message.uri, id: message.documentID) else {
            logger.debug("presence of \(message.origin) in \(message.uri) ignored: no such document here")
            return
        }
        logger.debug("presence of \(message.origin) (\(message.user.name)) in \(message.uri), sequence \(message.sequence), from link \(link.id)")
        let originReplica = message.origin.split(separator: ":").first.flatMap { UInt64($0) }
        if originReplica == replica.rawValue { return }   // our own, come back round
        let direct = originReplica != nil && originReplica == link.peerReplica?.rawValue
        if !direct, let owner = links.values.first(where: { $0 !== link && $0.carries(message.uri) && $0.peerReplica?.rawValue == originReplica }) {
            return link.refusedPresence("presence of \(message.origin) is taken only from its own daemon's link \(owner.id)")
        }
        let known = document.peerPresences[message.origin]
        if let known, known.viaLink != link.id, !direct {
            return link.refusedPresence("presence of \(message.origin) is taken only from link \(known.viaLink), which it came by first")
        }
        // Its own daemon's link overrides what came round another way, whatever its sequence.
        if let known, (known.viaLink == link.id || !direct), known.sequence >= message.sequence { return }
        // "Left" for an editor not shown here: nothing to clear, nothing to relay (ends duplicates).
        if message.selections.isEmpty, known == nil { return }
        if known == nil, document.peerPresences.count >= Self.maximumPeerPresences {
            return link.cut("more than \(Self.maximumPeerPresences) editors' presence in \(DocumentName.displayed(message.uri))")
        }
        // Across documents too: 1,024 per document in each of 50,000 documents would be tens of GB.
        let holder = message.selections.isEmpty ? nil : link.id
        if holder != nil, known?.viaLink != link.id, (presencesByLink[link.id] ?? 0) >= maximumPerLink {
            return link.cut("more than \(maximumPerLink) editors' presence across documents from one link")
        }
        if known?.viaLink != holder {
            if let old = known?.viaLink { presencesByLink[old] = (presencesByLink[old] ?? 1) - 1 }
            if let holder { presencesByLink[holder, default: 0] += 1 }
        }
        let number = known?.number ?? nextPresenceNumber()
        let selection = SharedDocument.RemoteSelection(user: message.user, selections: message.selections)
        document.peerPresences[message.origin] = message.selections.isEmpty ? nil
            : SharedDocument.PeerPresence(selection: selection, sequence: message.sequence, viaLink: link.id, number: number)
        for session in sessions.values { session.sendSelections(number: number, selection: selection, in: document) }
        for other in links.values where other !== link && other.carries(message.uri) { other.sendPresence(message) }
    }

    /// The link `link` closed: the presence that came by it is gone from this daemon's editors
    /// and, as "left", from the daemons this one relayed it to.
    func dropPresence(via link: any PeerEndpoint) {
        presencesByLink[link.id] = nil
        for document in documents.values {
            for (origin, presence) in document.peerPresences where presence.viaLink == link.id {
                document.peerPresences[origin] = nil
                let left = SharedDocument.RemoteSelection(user: presence.selection.user, selections: [])
                for session in sessions.values { session.sendSelections(number: presence.number, selection: left, in: document) }
                let message = PresenceMessage(uri: document.uri, documentID: document.id, origin: origin, sequence: presence.sequence + 1,
                                              user: presence.selection.user, selections: [])
                for other in links.values where other !== link && other.carries(document.uri) { other.sendPresence(message) }
            }
        }
    }

    /// Every editor's selections in `document` on other daemons, for a session that just opened it.
    func sendPeerPresence(in document: SharedDocument, to session: any EditorEndpoint) {
        for presence in document.peerPresences.values.sorted(by: { $0.number < $1.number }) where !presence.selection.selections.isEmpty {
            session.sendSelections(number: presence.number, selection: presence.selection, in: document)
        }
    }

    /// Editors on other daemons a document may show at once; a peer that claims more is cut off.
    static let maximumPeerPresences = 1024
    /// How many presence entries each link brought (kept as entries come, move and go).
    private var presencesByLink: [Int: Int] = [:]
}

/// A local session whose presence in a document peers have not heard yet.
struct PendingPresence: Hashable {
    var uri: String
    var session: Int
}
