import Foundation
import NIOCore
import NIOPosix

/// `quire attach PATH`: connects to a running daemon's Unix socket and bridges this process's
/// stdin and stdout to it, so an editor can start `quire attach` as if it were the daemon.
/// Only a daemon that runs as the same user (`SO_PEERCRED`) is attached to. `quire peer
/// --stdio` bridges the same way to the peer socket of the daemon holding its data directory.
public enum AttachBridge {
    /// Runs until the daemon closes and everything it sent has been written to stdout; returns
    /// 0 then, 1 on failure. End of stdin is passed on (after what was read from it) as the end
    /// of the socket's output, so `printf REQUEST | quire attach` gets its whole reply.
    /// `command` names the bridge in errors (`quire attach`, `quire peer --stdio`).
    public static func run(socketPath: String, command: String = "quire attach") throws -> Int32 {
        guard Descriptors.isPollable(0), Descriptors.isPollable(1) else {
            throw PeerNetworkError("\(command) needs pipes, sockets or a terminal on stdin and stdout, as an editor or ssh gives it")
        }
        // Unlike the daemon, the bridge just dies of a stop signal; it must only not inherit them blocked.
        var stopSignals = DaemonServer.stopSignals()
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let donePromise = group.next().makePromise(of: Int32.self)
        let done = ExitLatch(donePromise)
        // However this ends (a daemon not listening yet, another user's), the exit promise is
        // settled on the loop before the loop goes: SwiftNIO traps on an unsettled promise in
        // debug builds, which killed a retrying bridge at its first failed attempt.
        defer { try? group.next().submit { done.finish(1) }.wait() }
        nonisolated(unsafe) var stdio: Channel?
        nonisolated(unsafe) var socket: Channel?
        let daemonUIDPromise = group.next().makePromise(of: uid_t?.self)
        let connecting = ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            // Nothing is read from the daemon before stdout is bridged (below): a daemon that
            // speaks first (a peer link's hello) would otherwise lose its first bytes.
            .channelOption(.autoRead, value: false)
            .channelInitializer { channel in
                socket = channel
                // The daemon closed: exit only once everything it sent has been written to stdout
                // (a large reply may still be queued behind a slow reader; closing now would cut it).
                return channel.pipeline.addHandlers([PeerUIDReader(uid: daemonUIDPromise),
                                                     ByteForwarder(to: { stdio }, onEnd: { drain(stdio) { done.finish(0) } })])
            }
            .connect(unixDomainSocketPath: socketPath)
        let socketChannel: Channel
        do {
            socketChannel = try connecting.wait()
        } catch {
            daemonUIDPromise.fail(error)
            throw error
        }
        // An editor's text goes only to a daemon of its own user's, whoever made the socket.
        let daemonUID = try daemonUIDPromise.futureResult.wait()
        guard daemonUID == getuid() else {
            socketChannel.close(promise: nil)
            let who = daemonUID.map { "uid \($0)" } ?? "a process the kernel does not name"
            throw PeerNetworkError("the daemon at \(socketPath) runs as \(who), not as you (uid \(getuid())); \(command) sends nothing to it")
        }
        let output = dup(1)
        dup2(2, 1)
        // Each channel is recorded in its initializer, on the loop, before it can read: a reply
        // must never find its way out missing.
        _ = try NIOPipeBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                stdio = channel
                return channel.pipeline.addHandler(ByteForwarder(to: { socket }, onEnd: {
                    // The editor closed stdin: once what it sent has reached the socket, let the
                    // daemon see end of input, then wait for it to answer and close.
                    drain(socket) { socket?.close(mode: .output, promise: nil) }
                }))
            }
            .takingOwnershipOfDescriptors(input: 0, output: output).wait()
        try socketChannel.setOption(.autoRead, value: true).wait()
        let status = try donePromise.futureResult.wait()
        try? group.next().submit { stdio?.close(promise: nil) }.wait()
        socketChannel.close(promise: nil)
        return status
    }

    /// Calls `then` once every write queued on `channel` so far has completed (or failed):
    /// writes complete in order, so an empty write after them completes last. On the channel's
    /// event loop; `then` runs at once when there is no channel.
    private static func drain(_ channel: Channel?, then: @escaping () -> Void) {
        guard let channel else { return then() }
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in then() }
    }
}
