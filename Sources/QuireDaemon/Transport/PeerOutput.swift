import NIOCore

/// What a peer channel has been given to write and has not handed to the kernel yet, bounded:
/// a peer that does not read is cut once more than `limit` bytes wait for it, instead of the
/// daemon buffering for it without end (protocol/peer.md, *Bounds*).
///
/// Guarantees: at most `limit` bytes wait at any time (a write that would pass it is dropped, and
/// the link is cut on the next turn of the event loop, outside the write that found it); editors
/// and other links never wait for this one. Used on the channel's event loop only.
final class PeerOutput {
    private let channel: Channel
    private let limit: Int
    /// Bytes written and not yet taken by the kernel.
    private(set) var unsent = 0
    private var overflowed = false
    /// Called once, with the bytes that waited, when the limit was passed.
    var onOverflow: ((Int) -> Void)?

    init(channel: Channel, limit: Int) {
        self.channel = channel
        self.limit = limit
    }

    func write(_ bytes: [UInt8]) {
        guard !overflowed else { return }
        guard unsent + bytes.count <= limit else {
            overflowed = true
            let waiting = unsent
            channel.eventLoop.execute { [self] in onOverflow?(waiting) }
            return
        }
        unsent += bytes.count
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let written = channel.eventLoop.makePromise(of: Void.self)
        let count = bytes.count
        written.futureResult.whenComplete { [self] _ in unsent -= count }
        channel.writeAndFlush(buffer, promise: written)
    }
}
