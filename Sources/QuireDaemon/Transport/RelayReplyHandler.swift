import NIOCore
import QuireRelay

/// The first handler on a connection to a relay: sends the preamble as soon as the connection is
/// up, reads the relay's reply (at most `RelayWire.replyBytes` bytes), and once paired installs the
/// peer handler after itself and starts it, passing on every later byte untouched. Until then the
/// channel is not active for anything behind it. Used on the channel's event loop only.
final class RelayReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let preamble: [UInt8]
    /// The handler that runs the peer link, for the role the relay gave (`accepts`), or nil.
    private let onPaired: (_ accepts: Bool) -> ChannelHandler?
    /// The connection ended before it was paired: why, and the relay's status if it sent one.
    private let onUnpaired: (_ reason: String, _ status: RelayWire.Status?) -> Void
    private var reply: [UInt8] = []
    private var paired = false
    private var ended = false

    init(preamble: [UInt8], onPaired: @escaping (Bool) -> ChannelHandler?,
         onUnpaired: @escaping (String, RelayWire.Status?) -> Void) {
        self.preamble = preamble
        self.onPaired = onPaired
        self.onUnpaired = onUnpaired
    }

    func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: preamble.count)
        buffer.writeBytes(preamble)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !paired else { return context.fireChannelRead(data) }
        guard !ended else { return }
        var buffer = unwrapInboundIn(data)
        reply += buffer.readBytes(length: min(buffer.readableBytes, RelayWire.replyBytes - reply.count)) ?? []
        switch RelayWire.parseReply(reply) {
        case .incomplete:
            return
        case .invalid(let why):
            end(context, "the relay sent \(why)", status: nil)
        case .complete(let status, _):
            switch status {
            case .accept, .connect:
                guard let handler = onPaired(status == .accept) else { return end(context, "no peer link could be made", status: nil) }
                do {
                    try context.pipeline.syncOperations.addHandler(handler, position: .after(self))
                } catch {
                    return end(context, "cannot start the peer link: \(error)", status: nil)
                }
                paired = true
                context.fireChannelActive()
                if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
            case .expired:
                end(context, "no partner came to the relay in time", status: status)
            case .full:
                end(context, "the relay is full", status: status)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if !paired, let event = event as? ChannelEvent, event == .inputClosed {
            return end(context, "the relay closed the connection before pairing it", status: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if paired { return context.fireChannelInactive() }
        end(context, "the relay closed the connection before pairing it", status: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if paired { return context.fireErrorCaught(error) }
        end(context, "\(error)", status: nil)
    }

    private func end(_ context: ChannelHandlerContext, _ reason: String, status: RelayWire.Status?) {
        guard !ended else { return }
        ended = true
        context.close(promise: nil)
        onUnpaired(reason, status)
    }
}
