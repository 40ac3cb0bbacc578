import Logging
import NIOCore
import NIOPosix

/// Accepts editors (or, with `kind: .peer`, peer links) on a Unix socket: binds it (`EditorSocket`: mode 0600, replacing only a
/// stale socket of the user's) and admits a connection only when the kernel says it comes
/// from `ownUID` (`EditorCredentials`); any other is logged with its uid and closed before
/// anything is read from it or sent to it.
enum EditorSocketServer {
    /// Listens on `path`; `accept` sets up each admitted connection's pipeline (on its loop).
    /// Returns the socket, to be removed with `removeIfStillOurs()` at exit.
    static func listen(path: String, group: EventLoopGroup, ownUID: uid_t, logger: Logger, kind: LocalSocketKind = .editor,
                       accept: @escaping @Sendable (Channel) throws -> Void) throws -> EditorSocket {
        let socket = try EditorSocket.bind(path: path, kind: kind)
        let bound = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 16)
            // An editor's end of input is an event (answered, then closed), not an abrupt close;
            // a peer's is the end of its link, as on TCP.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                EditorCredentials.peerUID(of: channel)
                    .map { Optional($0) }
                    .recover { _ in nil }
                    .flatMapThrowing { uid in
                        if let refusal = EditorCredentials.refusal(peerUID: uid, ownUID: ownUID, kind: kind) {
                            logger.warning("\(path): \(refusal)")
                            throw EditorSocketError(refusal)
                        }
                        try accept(channel)
                    }
            }
            .withBoundSocket(socket.descriptor)
        do {
            _ = try bound.wait()
        } catch {
            // The channel owns the descriptor once made; closing it here could close another's.
            socket.removeIfStillOurs()
            throw error
        }
        return socket
    }
}
