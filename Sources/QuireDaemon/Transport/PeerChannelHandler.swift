import NIOCore

/// Feeds a peer channel's bytes to a `PeerLink` on the daemon's event loop and writes its frames
/// back; the link starts its handshake as soon as the channel is active.
final class PeerChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let makeLink: (Channel) -> PeerLink?
    private var link: PeerLink?

    init(makeLink: @escaping (Channel) -> PeerLink?) {
        self.makeLink = makeLink
    }

    func channelActive(context: ChannelHandlerContext) {
        link = makeLink(context.channel)
        if link == nil { context.close(promise: nil) }
        link?.start()
        if let link {
            // However slowly the peer sends, the handshake ends in time.
            let timeout = TimeAmount.milliseconds(Int64(link.handshakeTimeout * 1000))
            context.eventLoop.scheduleTask(in: timeout) { [weak link] in link?.handshakeTimedOut() }
            // A peer that connected here and says nothing frees its handshake slot quickly.
            if link.isIncoming {
                let helloTimeout = TimeAmount.milliseconds(Int64(link.helloTimeout * 1000))
                context.eventLoop.scheduleTask(in: helloTimeout) { [weak link] in link?.helloTimedOut() }
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        if let bytes = buffer.readBytes(length: buffer.readableBytes) { link?.receive(bytes) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        link?.endRead()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            link?.endOfInput()
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        link?.endOfInput()
        link = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        link?.endOfInput()
        context.close(promise: nil)
    }
}
