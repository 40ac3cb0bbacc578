import NIOCore

/// Feeds an editor channel's bytes to an `EditorConnection` on the channel's event loop and
/// writes its frames back. One handler per editor connection (stdio or a socket).
final class EditorChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let makeConnection: (@escaping ([UInt8]) -> Void) -> EditorConnection
    private var connection: EditorConnection?
    private let onClose: (EditorConnection) -> Void

    init(makeConnection: @escaping (@escaping ([UInt8]) -> Void) -> EditorConnection, onClose: @escaping (EditorConnection) -> Void) {
        self.makeConnection = makeConnection
        self.onClose = onClose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        connection = makeConnection { bytes in
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            channel.writeAndFlush(buffer, promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if let bytes = buffer.readBytes(length: buffer.readableBytes) { connection?.receive(bytes, endingRead: false) }
    }

    /// The end of NIO's reads for now: one commit for all of them (as a peer link's reads).
    func channelReadComplete(context: ChannelHandlerContext) {
        connection?.endRead()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed, let connection {
            // End of input (`printf REQUEST | quire attach`, `quire < requests`): every reply
            // already written goes out before the channel closes. Closing at once failed the
            // writes still queued behind a slow reader and cut a large reply.
            self.connection = nil
            connection.endOfInput()
            let channel = context.channel
            let onClose = self.onClose
            channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in
                onClose(connection)
                channel.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func finish() {
        guard let connection else { return }
        self.connection = nil
        connection.endOfInput()
        onClose(connection)
    }
}
