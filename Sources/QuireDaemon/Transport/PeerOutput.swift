import NIOCore

/// Writes a peer link's frames to its channel and tells the link, write by write and in order,
/// when the kernel took them (or the channel dropped them as it closed), so the link can pace
/// its output to what the peer reads and bound what waits for it (`PeerLink+Output`,
/// protocol/peer.md, *Bounds*). Used on the channel's event loop only.
final class PeerOutput {
    private let channel: Channel
    /// Called with each write's byte count once it left this process's buffers.
    var onTaken: ((Int) -> Void)?

    init(channel: Channel) {
        self.channel = channel
    }

    func write(_ bytes: [UInt8]) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let written = channel.eventLoop.makePromise(of: Void.self)
        let count = bytes.count
        written.futureResult.whenComplete { [weak self] _ in self?.onTaken?(count) }
        channel.writeAndFlush(buffer, promise: written)
    }

    /// Runs `body` on a later turn of the channel's event loop.
    func later(_ body: @escaping () -> Void) {
        channel.eventLoop.execute(body)
    }
}
