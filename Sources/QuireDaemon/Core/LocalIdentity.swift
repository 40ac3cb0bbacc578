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
