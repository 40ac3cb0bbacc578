import Foundation
import NIOCore
import NIOPosix

/// `quire attach PATH`: connects to a running daemon's Unix socket and bridges this process's
/// stdin and stdout to it, so an editor can start `quire attach` as if it were the daemon.
public enum AttachBridge {
    /// Runs until either side closes; returns 0 when the daemon closed first, 1 on failure.
    public static func run(socketPath: String) throws -> Int32 {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let done = group.next().makePromise(of: Int32.self)
        nonisolated(unsafe) var stdio: Channel?
        nonisolated(unsafe) var socket: Channel?
        let socketChannel = try ClientBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.pipeline.addHandler(ByteForwarder(to: { stdio }, onEnd: { done.succeed(0) }))
            }
            .connect(unixDomainSocketPath: socketPath).wait()
        socket = socketChannel
        let output = dup(1)
        dup2(2, 1)
        stdio = try NIOPipeBootstrap(group: group)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.pipeline.addHandler(ByteForwarder(to: { socket }, onEnd: {
                    // The editor closed stdin: let the daemon see end of input, then wait for it to close.
                    socket?.close(mode: .output, promise: nil)
                }))
            }
            .takingOwnershipOfDescriptors(input: 0, output: output).wait()
        let status = try done.futureResult.wait()
        stdio?.close(promise: nil)
        socketChannel.close(promise: nil)
        return status
    }
}
