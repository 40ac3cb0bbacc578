import JSON
import QuireProtocol
import ReplicatingTypes

/// Live links repair themselves (protocol/peer.md, *Repair*): now and then, and after every
/// (re)connection, the two daemons compare a digest of each document they share and, where the
/// digests differ although no operations are on the way, each sends the other what it lacks.
///
/// A round: this daemon `ask`s with its digest and the number of operations and state frames it
/// has received on the link. The peer compares: when that number is all it has sent, nothing of
/// its own is still on the way, and everything this daemon sent before the ask has arrived there
/// (links deliver in order, and each daemon relays every change at once), so differing digests
/// mean the copies really differ. It then `answer`s with its version vector; this daemon sends the
/// operations that vector lacks (with its whole removal set) and a `want` with its own version
/// vector, to which the peer answers with the operations this daemon lacks. The next tick asks
/// again to confirm. Bounds and rates: `DigestExchange`.
extension PeerSession {
    /// Once per heartbeat tick: asks the peer about every shared document that changed since it
    /// was last asked about, or whose last round did not agree (at most
    /// `DigestExchange.maximumAsksPerTick`). A new link asks about every document it shares.
    /// - Complexity: O(documents log documents), plus O(runs) per changed document asked about
    ///   (its digest, computed once per change whatever the number of links).
    func sendDueDigests() {
        guard state == .established else { return }
        if digests.droppedThisTick > 0 {
            daemon.logger.warning("peer link \(id): \(digests.droppedThisTick) digest asks of the peer dropped within one tick (over the limit)")
        }
        digests.startTick()
        var asked = 0
        for document in daemon.documents.values.sorted(by: { $0.uri < $1.uri }) where sharesForRepair(document) {
            guard asked < DigestExchange.maximumAsksPerTick else { break }
            guard digests.shouldAsk(uri: document.uri, revision: document.revision) else { continue }
            send(.digest(DigestMessage(phase: .ask, uri: document.uri, documentID: document.id, digest: document.digest,
                                       received: digests.framesReceived).json))
            asked += 1
        }
    }

    /// Whether `document` is compared on this link: the peer holds it, and operations of it go
    /// both ways (not while one side must first rebase onto the other's state).
    private func sharesForRepair(_ document: SharedDocument) -> Bool {
        carries(document.uri) && peerVersions[document.uri] != nil && staleAtPeer[document.uri] == nil && !isRetired(in: document)
    }

    /// A `digest` frame from the authenticated peer.
    func receiveDigest(_ message: DigestMessage) {
        // A document this daemon does not have, or does not compare on this link: nothing to
        // answer (the document lists bring it first).
        guard let document = repairedDocument(uri: message.uri, id: message.documentID), sharesForRepair(document) else { return }
        switch message.phase {
        case .ask: answer(message, about: document)
        case .answer: take(message, about: document)
        case .want:
            guard digests.takeWant(uri: document.uri), let version = message.version else { return }
            sendWhatIsLacking(version, of: document)
        }
    }

    /// The local copy of the peer's document `uri` with `id`: under that name, under `uri#id`,
    /// or (when the peer's own name for it is `name#id`) under `name`.
    private func repairedDocument(uri: String, id: UInt64) -> SharedDocument? {
        if let document = daemon.document(uri: uri, id: id) { return document }
        guard let hash = uri.lastIndex(of: "#") else { return nil }
        return daemon.document(uri: String(uri[..<hash]), id: id)
    }

    /// Answers the peer's ask with this copy's digest, and with its version vector when the
    /// digests differ although nothing is on the way (a real difference, to repair).
    private func answer(_ ask: DigestMessage, about document: SharedDocument) {
        guard digests.mayAnswer(uri: document.uri) else { return }
        let ours = document.digest
        // Catch-up still owed on this link is on the way too, though not built yet.
        let nothingOnTheWay = ask.received == digests.framesSent && !link.hasQueuedOutput
        let repair = nothingOnTheWay && ask.digest != ours
        if repair {
            digests.expectWant(uri: document.uri)
            daemon.logger.info("peer link \(id): \(document.uri) differs from the peer's copy; repairing")
        }
        send(.digest(DigestMessage(phase: .answer, uri: ask.uri, documentID: document.id, digest: ours, received: digests.framesReceived,
                                   version: repair ? document.text.versionVector : nil).json))
    }

    /// The peer's answer to our ask: agreement, a real difference to repair (it sent its version
    /// vector), or a difference that frames still on the way may explain (ask again later).
    private func take(_ answer: DigestMessage, about document: SharedDocument) {
        guard digests.takeAnswer(uri: document.uri) else { return }
        if let version = answer.version {
            sendWhatIsLacking(version, of: document)
            guard state == .established else { return }
            send(.digest(DigestMessage(phase: .want, uri: answer.uri, documentID: document.id, version: document.text.versionVector).json))
            digests.differed(uri: document.uri, repaired: true)
        } else if answer.digest == document.digest {
            digests.agreed(uri: document.uri)
        } else {
            digests.differed(uri: document.uri, repaired: false)
        }
    }

    /// Sends the operations a copy with `version` lacks: the insertions it has not seen and this
    /// copy's whole removal set (so a removal it missed reaches it too), or the whole state when
    /// it has nothing and this copy dropped tombstones; at the pace the peer reads. A version
    /// claiming edits this daemon's editors never made cuts the link.
    private func sendWhatIsLacking(_ version: VersionVector, of document: SharedDocument) {
        if let claim = daemon.impossibleClaim(in: version, for: document) { return cut("version vector from the future: \(claim)") }
        queueCatchUp(CatchUp(document, .lacking(since: version, theyHaveNothing: version.counts.isEmpty, announceIfNothing: false)))
    }
}
