import JSON
import QuireProtocol

/// Presence across daemons: every editor's cursors and selections, with its user's name and
/// colour, reach the editors of every daemon that holds the document, relayed through chains,
/// placed in each receiver's own view, and cleared when the editor or the link they came by goes.
///
/// Rate: an editor's cursor updates of one read go out as one `presence` frame per link (the
/// latest), so typing costs at most one small frame per keystroke and bursts cost one.
extension Daemon {
    /// The origin key of a session of this daemon.
    func presenceOrigin(of sessionID: Int) -> String { "\(replica.rawValue):\(sessionID)" }

    /// A local session's selections in `document` changed (or it left): tell peers at the next flush.
    func localPresenceChanged(session: Int, in document: SharedDocument) {
        pendingPresence.insert(PendingPresence(uri: document.uri, session: session))
    }

    /// Sends what changed since the last flush, one frame per editor and document.
    func sendPendingPresence() {
        guard !pendingPresence.isEmpty else { return }
        let pending = pendingPresence.sorted { ($0.uri, $0.session) < ($1.uri, $1.session) }
        pendingPresence.removeAll()
        let established = links.values.filter { $0.state == .established }.sorted { $0.id < $1.id }
        guard !established.isEmpty else { return }
        for item in pending {
            guard let document = documents[item.uri] else { continue }
            let message = ownPresence(of: item.session, in: document)
            for link in established { link.sendPresence(message) }
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
    func presenceMessages(of document: SharedDocument, for link: PeerLink) -> [PresenceMessage] {
        var messages = document.selections.keys.sorted().map { ownPresence(of: $0, in: document) }
        for (origin, presence) in document.peerPresences.sorted(by: { $0.key < $1.key })
        where presence.viaLink != link.id && !presence.selection.selections.isEmpty {
            messages.append(PresenceMessage(uri: document.uri, documentID: document.id, origin: origin, sequence: presence.sequence,
                                            user: presence.selection.user, selections: presence.selection.selections))
        }
        return messages
    }

    /// A presence frame from an authenticated peer: checked, then held on the link until the end
    /// of the read (`applyQueuedPresence`), so many messages of one editor in one read count once.
    func receivePresence(_ json: JSONValue, from link: PeerLink) throws(PresenceMessage.Invalid) {
        let message = try PresenceMessage(json: json)
        guard link.queuePresence(message) else {
            throw PresenceMessage.Invalid(description: "more than \(PeerLink.maximumQueuedPresence) editors' presence waiting in one read")
        }
    }

    /// Applies what every link's peer said of presence since the last call, the newest message
    /// per editor, as far as each link's rate allows (`Configuration.presencePerSecond`); the rest
    /// waits for the next read or tick, still coalesced. Called at the end of every read.
    func applyQueuedPresence() {
        let now = monotonicClock()
        for link in links.values.sorted(by: { $0.id < $1.id }) where link.state == .established {
            for message in link.takeQueuedPresence(now: now) where link.state == .established { applyPresence(message, from: link) }
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
    private func applyPresence(_ message: PresenceMessage, from link: PeerLink) {
        guard let document = document(uri: message.uri, id: message.documentID) else {
            logger.debug("presence of \(message.origin) in \(message.uri) ignored: no such document here")
            return
        }
        logger.debug("presence of \(message.origin) (\(message.user.name)) in \(message.uri), sequence \(message.sequence), from link \(link.id)")
        let originReplica = message.origin.split(separator: ":").first.flatMap { UInt64($0) }
        if originReplica == replica.rawValue { return }   // our own, come back round
        let direct = originReplica != nil && originReplica == link.peerReplica?.rawValue
        if !direct, let owner = links.values.first(where: { $0 !== link && $0.state == .established && $0.peerReplica?.rawValue == originReplica }) {
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
        let number = known?.number ?? nextPresenceNumber()
        let selection = SharedDocument.RemoteSelection(user: message.user, selections: message.selections)
        document.peerPresences[message.origin] = message.selections.isEmpty ? nil
            : SharedDocument.PeerPresence(selection: selection, sequence: message.sequence, viaLink: link.id, number: number)
        for session in sessions.values { session.sendSelections(number: number, selection: selection, in: document) }
        for other in links.values where other !== link && other.state == .established { other.sendPresence(message) }
    }

    /// The link `link` closed: the presence that came by it is gone from this daemon's editors
    /// and, as "left", from the daemons this one relayed it to.
    func dropPresence(via link: PeerLink) {
        for document in documents.values {
            for (origin, presence) in document.peerPresences where presence.viaLink == link.id {
                document.peerPresences[origin] = nil
                let left = SharedDocument.RemoteSelection(user: presence.selection.user, selections: [])
                for session in sessions.values { session.sendSelections(number: presence.number, selection: left, in: document) }
                let message = PresenceMessage(uri: document.uri, documentID: document.id, origin: origin, sequence: presence.sequence + 1,
                                              user: presence.selection.user, selections: [])
                for other in links.values where other !== link && other.state == .established { other.sendPresence(message) }
            }
        }
    }

    /// Every editor's selections in `document` on other daemons, for a session that just opened it.
    func sendPeerPresence(in document: SharedDocument, to session: EditorSession) {
        for presence in document.peerPresences.values.sorted(by: { $0.number < $1.number }) where !presence.selection.selections.isEmpty {
            session.sendSelections(number: presence.number, selection: presence.selection, in: document)
        }
    }

    /// Editors on other daemons a document may show at once; a peer that claims more is cut off.
    static let maximumPeerPresences = 1024
}

/// A local session whose presence in a document peers have not heard yet.
struct PendingPresence: Hashable {
    var uri: String
    var session: Int
}
