import ReplicatingTypes

/// Who this daemon is towards peers: its replica ID, its identity key and the user name peers
/// are shown (`--user-name`, else the first editor's user).
final class LocalIdentity {
    let replica: ReplicaID
    let identity: PeerIdentity
    private(set) var userName: String
    private var userNameChosen: Bool

    init(replica: ReplicaID, identity: PeerIdentity, configuration: DaemonConfiguration) {
        self.replica = replica
        self.identity = identity
        userName = configuration.userName
        userNameChosen = configuration.userNameIsExplicit
    }

    /// An editor introduced itself as `name`: the daemon takes it for peers unless
    /// `--user-name` was given or an earlier editor already named it.
    func editorNamed(_ name: String) {
        guard !userNameChosen, !name.isEmpty else { return }
        userName = DisplayText.clean(name)
        userNameChosen = true
    }
}

/// Replica IDs this daemon hands out (to editor sessions and to edits made on behalf of
/// something else), remembered so that a peer claiming more of their edits than exist is caught.
final class ReplicaSource {
    private let next: () -> ReplicaID
    private var own: Set<ReplicaID> = []

    init(_ next: @escaping () -> ReplicaID) { self.next = next }

    /// A fresh replica ID of this daemon's.
    func make() -> ReplicaID {
        let replica = next()
        own.insert(replica)
        return replica
    }

    /// A description of a count in `vector` for one of this daemon's own replicas that exceeds
    /// what `document` holds: edits that were never made.
    func impossibleClaim(in vector: VersionVector, for document: SharedDocument) -> String? {
        let have = document.text.versionVector
        for (replica, count) in vector.counts where own.contains(replica) && count > have[replica] {
            return "\(count) edits of replica \(replica) claimed, \(have[replica]) made"
        }
        return nil
    }
}
