import QuireProtocol
import ReplicatingTypes

/// The frames of catch-up (what a peer lacks after a handshake or a repair, a document sent
/// whole), built one at a time as the link's paced output asks for them (`PeerLink+Output`).
extension PeerSession {
    /// The next frame `catchUp` owes the peer, nil once it owes nothing more (or no longer may
    /// send it: the document went or was replaced, or a rebase stands between the copies).
    /// - Complexity: O(runs + k log k) for the document's k runs to send, on its first frame;
    ///   O(one frame) after that.
    func nextFrame(of catchUp: inout CatchUp) -> PeerFrame? {
        let document = catchUp.document
        guard daemon.documents[document.uri] === document, carries(document.uri), staleAtPeer[document.uri] == nil else { return nil }
        if catchUp.operations == nil {
            switch catchUp.kind {
            case .state:
                catchUp.operations = []
                return stateFrame(of: document)
            case .lacking(let since, let theyHaveNothing, let announceIfNothing):
                if document.text.scalars.compactedCount > 0, theyHaveNothing {
                    catchUp.operations = []
                    return stateFrame(of: document)
                }
                guard !isRetired(in: document) else { return nil }
                let operations = document.text.operations(since: since)
                catchUp.operations = operations
                if operations.isEmpty, announceIfNothing { return announcement(of: document) }
            }
        }
        guard let operations = catchUp.operations, catchUp.sent < operations.count, !isRetired(in: document) else { return nil }
        // The first edits of a document that was only opened when the link came up: from now on
        // the peer holds it (its tombstones wait for the peer).
        if let holder = peerReplica, document.sharing.holders[holder] == nil { daemon.markShared(document, holder: holder) }
        let end = min(catchUp.sent + daemon.configuration.maximumOperationsPerFrame, operations.count)
        let chunk = Array(operations[catchUp.sent..<end])
        catchUp.sent = end
        operationsOut += chunk.count
        notePeerHas(chunk, of: document.uri)
        if catchUp.sent == operations.count { catchUp.operations = [] }   // sent: its memory goes now
        return .operations(uri: document.uri, documentID: document.id, payload: ReplicatingArrayCoding.encode(chunk))
    }

    /// `document`'s whole state as a frame; from now on the peer holds it.
    private func stateFrame(of document: SharedDocument) -> PeerFrame {
        daemon.markShared(document, holder: peerReplica)
        peerVersions[document.uri] = document.text.versionVector.counts
        return .state(uri: document.uri, documentID: document.id, payload: document.text.encodedState())
    }
}

extension PeerSession {
    /// Asks again for the state of `document` when this copy still has to rebase onto the peer's
    /// (it waited for an editor to close it): the peer answers our entry with its state.
    func retryRebase(of document: SharedDocument) {
        guard state == .established, staleAtPeer[document.uri] != nil, carries(document.uri) else { return }
        announce(document)
    }

    /// Sends all of `document` to a peer that lacks it, at the pace the peer reads: its
    /// operations, or its state once it has dropped tombstones (operations anchored to them could
    /// not be placed), or an announcement when it is empty.
    func sendWhole(_ document: SharedDocument) {
        guard carries(document.uri) else { return }
        queueCatchUp(CatchUp(document, .lacking(since: VersionVector(), theyHaveNothing: true, announceIfNothing: true)))
    }

    /// Sends the whole state of `document`, at the pace the peer reads.
    func sendState(of document: SharedDocument) {
        guard carries(document.uri) else { return }
        queueCatchUp(CatchUp(document, .state))
    }
}
