import Glibc
import NIOCore

/// Who is at the other end of an editor's Unix socket, from the kernel (`SO_PEERCRED`, the
/// credentials of the process that connected), and whether the daemon takes them: only
/// processes of the user the daemon runs as. The socket's mode (0600) keeps others out
/// already; this check holds even where a socket's file or directory modes do not (a socket
/// made under a loose umask, a directory someone else can reach).
public enum EditorCredentials {
    /// The uid of the process that connected to the socket `fd`, nil when the kernel does not say.
    public static func peerUID(ofDescriptor fd: Int32) -> uid_t? {
        var credentials = Credentials()
        var length = socklen_t(MemoryLayout<Credentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              length == socklen_t(MemoryLayout<Credentials>.size) else { return nil }
        return credentials.uid
    }

    /// Linux's `struct ucred` (`pid_t pid; uid_t uid; gid_t gid;`), which Glibc's Swift module
    /// leaves out (it needs `_GNU_SOURCE`): three 32-bit fields, laid out in this order.
    struct Credentials: Sendable {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    /// The uid at the other end of `channel` (an accepted or connected Unix socket); fails
    /// when the channel is not a socket or the kernel does not say.
    static func peerUID(of channel: Channel) -> EventLoopFuture<uid_t> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(EditorSocketError("the editor's connection is not a socket"))
        }
        let credentials: EventLoopFuture<Credentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET),
                                                                                  name: SocketOptionName(SO_PEERCRED))
        return credentials.map { $0.uid }
    }

    /// Why a connection from `peerUID` is refused (nil: it is accepted). Only `ownUID`, the
    /// user the daemon runs as, is accepted; an unknown uid is refused too. `kind` names the
    /// socket: the rule is the same for editors and for peer links.
    static func refusal(peerUID: uid_t?, ownUID: uid_t, kind: LocalSocketKind = .editor) -> String? {
        let what = "\(kind.article) \(kind.noun) connection"
        guard let peerUID else { return "refused \(what): the kernel did not say who connected" }
        guard peerUID == ownUID else {
            return "refused \(what) from uid \(peerUID): this daemon serves only its own user (uid \(ownUID))"
        }
        return nil
    }
}

/// Reads the uid at the other end of a connecting channel as soon as it is connected, before
/// any read: a daemon that refuses the connection and closes at once is still named.
final class PeerUIDReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// Succeeds with the uid (nil when the kernel does not say) once the channel is connected.
    let uid: EventLoopPromise<uid_t?>
    private var settled = false

    init(uid: EventLoopPromise<uid_t?>) {
        self.uid = uid
    }

    func channelActive(context: ChannelHandlerContext) {
        settle(EditorCredentials.peerUID(of: context.channel))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !settled {
            settled = true
            uid.succeed(nil)
        }
        context.fireChannelInactive()
    }

    private func settle(_ future: EventLoopFuture<uid_t>) {
        guard !settled else { return }
        settled = true
        future.whenComplete { [uid] result in uid.succeed(try? result.get()) }
    }
}
