import NIOCore

/// One daemon's connection to the relay: reads its preamble (bounded in size and time), waits
/// for its partner (bounded in time), then forwards what it sends to the partner as it is, at
/// most `RelayLimits.bytesPerSecond` and only as fast as the partner takes it. Reads are asked
/// for one at a time (`autoRead` is off), so a connection that is throttled or whose partner
/// does not read simply stops being read. Used on the relay's event loop only.
final class RelayConnection: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum State {
        case preamble([UInt8])
        case waiting([UInt8])
        case paired
        case closed
    }

    private let server: RelayServer
    /// The remote IP address (for the per-address bound) and `address:port` (for the log).
    let host: String
    let label: String
    private(set) var state = State.preamble([])
    var isCounted = false
    var isUnpaired = false
    private var context: ChannelHandlerContext?
    private var partner: RelayConnection?
    private var pairNumber = 0
    private var lastActivity = NIODeadline.now()
    private var tokens = 0.0
    private var refilledAt = NIODeadline.now()
    private var throttled = false
    private var wantsRead = false
    private var lastWrite: EventLoopFuture<Void>?

    init(server: RelayServer, host: String, label: String) {
        self.server = server
        self.host = host
        self.label = label
    }

    var isWaiting: Bool {
        if case .waiting = state { return true }
        return false
    }

    private var limits: RelayLimits { server.limits }

    // MARK: Channel events

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        if let refusal = server.admit(self) {
            server.dropped(self, kind: "relay full", reason: refusal)
            reply(.full)
            finish()
            return
        }
        let preambleTimeout = limits.preambleTimeout
        context.eventLoop.scheduleTask(in: Self.amount(preambleTimeout)) { [weak self] in
            guard let self, case .preamble = self.state else { return }
            self.drop(kind: "slow preamble", "no whole preamble within \(preambleTimeout) s")
        }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        switch state {
        case .preamble(var bytes):
            // Never more than one byte past the longest preamble is kept.
            let room = RelayWire.maximumPreambleBytes + 1 - bytes.count
            bytes += buffer.readBytes(length: min(buffer.readableBytes, room)) ?? []
            switch RelayWire.parsePreamble(bytes) {
            case .incomplete:
                state = .preamble(bytes)
            case .invalid(let why):
                drop(kind: "not a preamble", "sent \(why)")
            case .complete(let rendezvous, let consumed):
                if consumed < bytes.count || buffer.readableBytes > 0 {
                    drop(kind: "early bytes", "sent bytes after its preamble before it was paired")
                } else {
                    state = .waiting(rendezvous)
                    server.arrive(self, rendezvous: rendezvous)
                }
            }
        case .waiting:
            drop(kind: "early bytes", "sent bytes before it was paired")
        case .paired:
            let count = buffer.readableBytes
            lastActivity = .now()
            spend(count)
            partner?.forward(buffer)
        case .closed:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        readMore()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        // The partner waited for this connection to take its bytes.
        if context.channel.isWritable { partner?.resume() }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .closed = state {} else { state = .closed }
        server.leave(self)
        let partner = self.partner
        self.partner = nil
        self.context = nil
        partner?.partnerLeft()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        finish()
    }

    // MARK: Waiting and pairing

    func startWaiting(_ rendezvous: [UInt8]) {
        let waitTimeout = limits.waitTimeout
        context?.eventLoop.scheduleTask(in: Self.amount(waitTimeout)) { [weak self] in
            guard let self, case .waiting(let value) = self.state, value == rendezvous else { return }
            self.server.stopWaiting(self, rendezvous: rendezvous)
            self.server.note("\(self.label): no partner within \(waitTimeout) s", kind: "expired")
            self.reply(.expired)
            self.finish()
        }
    }

    func pair(with partner: RelayConnection, status: RelayWire.Status, number: Int) {
        self.partner = partner
        pairNumber = number
        state = .paired
        lastActivity = .now()
        refilledAt = .now()
        tokens = Double(limits.bytesPerSecond)
        reply(status)
        scheduleIdleCheck(after: limits.idleTimeout)
    }

    private func scheduleIdleCheck(after seconds: Double) {
        context?.eventLoop.scheduleTask(in: Self.amount(seconds)) { [weak self] in
            guard let self, case .paired = self.state else { return }
            let latest = max(self.lastActivity, self.partner?.lastActivity ?? self.lastActivity)
            let idle = Double((NIODeadline.now() - latest).nanoseconds) / 1e9
            if idle >= self.limits.idleTimeout {
                self.server.note("pair \(self.pairNumber): idle for \(Int(idle)) s, closed", kind: "idle")
                self.finish()
            } else {
                self.scheduleIdleCheck(after: self.limits.idleTimeout - idle)
            }
        }
    }

    // MARK: Forwarding

    private func forward(_ buffer: ByteBuffer) {
        guard let context, case .paired = state else { return }
        lastActivity = .now()
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: written)
        lastWrite = written.futureResult
    }

    /// Takes `count` bytes from the token bucket; past it, reading stops until it refills.
    private func spend(_ count: Int) {
        let now = NIODeadline.now()
        let rate = Double(limits.bytesPerSecond)
        tokens = min(rate, tokens + Double((now - refilledAt).nanoseconds) / 1e9 * rate) - Double(count)
        refilledAt = now
        if tokens < 0, !throttled, let context {
            throttled = true
            let wait = -tokens / rate
            context.eventLoop.scheduleTask(in: Self.amount(wait)) { [weak self] in
                self?.throttled = false
                self?.resume()
            }
        }
    }

    /// Asks for the next read unless this connection is throttled or its partner is not taking
    /// what it already got.
    private func readMore() {
        guard let context else { return }
        if case .closed = state { return }
        if case .paired = state, throttled || !(partner?.context?.channel.isWritable ?? true) {
            wantsRead = true
            return
        }
        wantsRead = false
        context.read()
    }

    private func resume() {
        if wantsRead { readMore() }
    }

    // MARK: Closing

    private func reply(_ status: RelayWire.Status) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: RelayWire.replyBytes)
        buffer.writeBytes(RelayWire.reply(status))
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private func drop(kind: String, _ reason: String) {
        if case .waiting(let rendezvous) = state { server.stopWaiting(self, rendezvous: rendezvous) }
        server.dropped(self, kind: kind, reason: reason)
        finish()
    }

    /// The partner went away: what it sent last is delivered (for at most 5 seconds), then this
    /// side closes too.
    private func partnerLeft() {
        guard let context, case .paired = state else { return }
        state = .closed
        let channel = context.channel
        guard let lastWrite else { channel.close(promise: nil); return }
        lastWrite.whenComplete { _ in channel.close(promise: nil) }
        context.eventLoop.scheduleTask(in: .seconds(5)) { channel.close(promise: nil) }
    }

    private func finish() {
        state = .closed
        context?.close(promise: nil)
    }

    private static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(min(max(seconds, 0), 1e6) * 1e9))
    }
}
