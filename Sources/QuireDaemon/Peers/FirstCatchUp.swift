import JSON
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

extension PeerLink {
    /// Takes note of what the peer's first document list says it holds (once; later lists only
    /// announce new documents). Malformed entries are ignored here: `sendWhatTheyLack` refuses them.
    func noteFirstList(_ list: JSONValue) {
        guard list["initial"] == .bool(true), !firstCatchUp.listReceived else { return }
        firstCatchUp.listReceived = true
        for entry in list["documents"]?.arrayValue ?? [] {
            guard let uri = entry["uri"]?.stringValue, let id = entry["id"]?.stringValue.flatMap({ UInt64($0) }),
                  let version = entry["version"]?.objectValue, let local = daemon.document(uri: uri, id: id) else { continue }
            var counts: [ReplicaID: UInt64] = [:]
            for (key, value) in version {
                if let replica = UInt64(key), let count = value.integerValue, count >= 0 { counts[ReplicaID(replica)] = UInt64(count) }
            }
            firstCatchUp.listed[local.uri] = VersionVector(counts)
        }
    }

    /// Whether this established link's first catch-up of document `uri` is over: the peer's first
    /// list arrived, and this copy holds everything the peer listed of it (or it listed none).
    func hasCaughtUp(on uri: String) -> Bool {
        guard state == .established, firstCatchUp.listReceived else { return false }
        guard let theirs = firstCatchUp.listed[uri] else { return true }
        return daemon.document(uri)?.text.versionVector.dominates(theirs) ?? false
    }
}
