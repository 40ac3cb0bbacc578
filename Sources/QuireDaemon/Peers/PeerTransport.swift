/// What the daemon asks of the network layer when an editor asks for peering: listening and
/// connecting happen outside the (I/O-free) daemon core.
public protocol PeerTransport: AnyObject {
    /// Starts accepting peers; returns the port actually bound (port 0 picks one).
    func listen(host: String, port: Int) throws -> Int
    /// The same, for links of `scope` only: a connector proving another secret this daemon holds
    /// fails as with a wrong one (a project's listener never opens the general documents or
    /// another project's to whoever reaches its port). nil: every secret held.
    func listen(host: String, port: Int, scope: DocumentScope?) throws -> Int
    /// Stops accepting new peers; live links stay up.
    func stopListening(port: Int) -> Bool
    /// Connects to a peer, reconnecting with backoff when the link drops; with `fingerprint`,
    /// only a peer whose identity key has it is accepted.
    func connect(host: String, port: Int, fingerprint: String?) throws
    /// The same, proving the secret of `scope` (a joined project's, protocol/decisions/project-sharing.md).
    func connect(host: String, port: Int, fingerprint: String?, scope: DocumentScope) throws
    /// Connects to one peer that may be reached at any of `addresses` (a join line's, best first):
    /// each attempt tries them in order until one connects, so one link is made, not one per
    /// address; after the link drops, or every address failed, it starts again from the first
    /// with backoff.
    func connect(addresses: [(host: String, port: Int)], fingerprint: String?, scope: DocumentScope) throws
    /// Dials a relay (`quire relay`) until it pairs this daemon with another of the same secret,
    /// and peers over that connection; dials again when the link drops (`protocol/relay.md`).
    func connect(relayHost: String, port: Int, fingerprint: String?) throws
    /// The same, with the rendezvous value and the secret of `scope` (the one it holds at each dial).
    func connect(relayHost: String, port: Int, fingerprint: String?, scope: DocumentScope) throws
    /// The same with `secret`, one of `scope`'s this daemon holds (an owner's invitation,
    /// protocol/decisions/roles.md): its rendezvous value, and links speaking with it alone.
    func connect(relayHost: String, port: Int, fingerprint: String?, scope: DocumentScope, secret: [UInt8]?) throws
    /// Stops the relay dialers of `scope` that speak with `secret`: a connection still waiting
    /// closes; a link made over one stays.
    func stopRelays(scope: DocumentScope, secret: [UInt8])
    /// Runs a command and peers over its stdin/stdout (for example `ssh host quire peer --stdio`).
    func connect(command: String, fingerprint: String?) throws
    /// The same, proving the secret of `scope`.
    func connect(command: String, fingerprint: String?, scope: DocumentScope) throws
    /// Closes every link of `scope` and stops its dialers (a project no longer shared or followed).
    func disconnect(scope: DocumentScope)
    /// The ports being listened on.
    var listeningPorts: [Int] { get }
}

extension PeerTransport {
    /// A transport without relay dialers by secret (test stand-ins) dials with the scope's.
    public func connect(relayHost: String, port: Int, fingerprint: String?, scope: DocumentScope, secret: [UInt8]?) throws {
        try connect(relayHost: relayHost, port: port, fingerprint: fingerprint, scope: scope)
    }

    public func stopRelays(scope: DocumentScope, secret: [UInt8]) {}
}
