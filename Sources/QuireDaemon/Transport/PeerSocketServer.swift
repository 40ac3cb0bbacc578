import Logging
import NIOCore
import NIOPosix

/// Accepts peer links on the Unix socket of the daemon's data directory
/// (`EditorSocketLocation.peerSocketPath`), where `quire peer --stdio` bridges when a running
/// daemon holds the directory: so `--connect-command 'ssh host quire peer --stdio'` reaches
/// that daemon, its documents and its key.
///
/// Guarantees: the socket is bound, guarded and removed exactly as the editor socket is
/// (`EditorSocketServer`: mode 0600, only a stale socket of the user's replaced, a connection
/// from another uid refused by `SO_PEERCRED` and logged before anything is read). An admitted
/// connection is an incoming peer link like a TCP one: the same handshake, secrets, handshake
/// slots and bounds in all (all connections here count as one address, `remoteHost`, which is held
/// to no per-address limit: only the user's own processes reach it).
enum PeerSocketServer {
    /// How links from this socket are shown (`peer/status`'s `address`) and counted.
    /// Not held to the limits of one address (`PeerLinks.heldToAddressLimits`).
    static let address = PeerLinks.ownSocketAddress

    /// Listens on `path` for `network`; returns the socket, to be removed with
    /// `removeIfStillOurs()` at exit.
    static func listen(path: String, network: PeerNetwork, group: EventLoopGroup, ownUID: uid_t, logger: Logger) throws -> EditorSocket {
        try EditorSocketServer.listen(path: path, group: group, ownUID: ownUID, logger: logger, kind: .peer) { channel in
            try channel.pipeline.syncOperations.addHandler(network.handler(address: address, incoming: true, remoteHost: address))
        }
    }
}
