import ReplicatingTypes

/// What a peer held of each document when a link came up (the version vectors of its first
/// document list), so this daemon can tell when everything the peer then had that this copy
/// lacked has arrived: the first catch-up of a document is over once this copy's version vector
/// dominates what the peer listed. `ReopenWaits` answers a restarted daemon's reopens after it.
struct FirstCatchUp {
    /// The peer's first document list was taken in.
    var listReceived = false
    /// By local document name: what the peer listed (only documents with the same ID here).
    var listed: [String: VersionVector] = [:]
}

extension PeerSession {
    /// Takes note of what the peer's first document list says it holds (once; later lists only
    /// announce new documents).
    func noteFirstList(_ list: DocumentList) {
        guard list.initial, !firstCatchUp.listReceived else { return }
        firstCatchUp.listReceived = true
        // What a peer that may not write holds never comes in: nothing to wait for.
        guard writeRefusal == nil else { return }
        for entry in list.entries {
            guard let local = daemon.document(uri: entry.uri, id: entry.id) else { continue }
            firstCatchUp.listed[local.uri] = VersionVector(entry.version)
        }
    }

    /// Whether this established link's first catch-up of document `uri` is over: the peer's first
    /// list arrived, and this copy holds everything the peer listed of it (or it listed none).
    /// Never, for a document outside the link's scope (the link does not carry it).
    func hasCaughtUp(on uri: String) -> Bool {
        guard state == .established, carries(uri), firstCatchUp.listReceived else { return false }
        guard let theirs = firstCatchUp.listed[uri] else { return true }
        return daemon.documents[uri]?.text.versionVector.dominates(theirs) ?? false
    }
}
