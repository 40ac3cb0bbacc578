import NIOCore

/// Copies every byte a channel reads to another channel, and closes the other side when this
/// one ends: the glue of `quire attach`, which bridges stdio to a daemon's socket.
final class ByteForwarder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let target: () -> Channel?
    private let onEnd: () -> Void

    init(to target: @escaping () -> Channel?, onEnd: @escaping () -> Void) {
        self.target = target
        self.onEnd = onEnd
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        target()?.writeAndFlush(unwrapInboundIn(data), promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { onEnd() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        onEnd()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        onEnd()
    }
}
