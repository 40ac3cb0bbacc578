import Foundation
import Logging
import NIOCore
import NIOPosix
import QuireRelay

/// Keeps one connection to a relay for `PeerNetwork` (`quire --relay host:port`,
/// `protocol/relay.md`): dials it, names the rendezvous value of the secret of its scope, and once the
/// relay pairs it runs a peer link over the connection in the role the relay gave. When the link
/// or the connection ends it dials again: at once after the relay said no partner came in time,
/// else with the backoff of `--connect` (0.5 s doubling to 30 s; reset by a link that got
/// established). It stops only when the daemon stops or an editor disconnected the link: a failed
/// handshake through a relay may be a stranger who saw the rendezvous value, not a wrong secret.
/// The rendezvous value is asked for at each dial (a joiner's secret turns from its invitation's
/// into the member secret once it is admitted); nil: the secret is gone, and it dials no more.
/// Used on the daemon's event loop only.
final class RelayDialer {
    typealias MakeHandler = (_ accepts: Bool, _ onClose: @escaping (_ reason: String, _ wasEstablished: Bool) -> Void) -> ChannelHandler?

    let host: String
    let port: Int
    /// The scope of the secret it dials with (its rendezvous value and the link's secret).
    let scope: DocumentScope
    /// The tag of the one secret it speaks with (`PeerSecret.tag(of:)`; an owner's invitation
    /// dialer), nil when it speaks with whatever secret its scope holds at each dial.
    let secretTag: String?
    private let rendezvous: () -> [UInt8]?
    private let loop: EventLoop
    private let logger: Logger
    private let makeHandler: MakeHandler
    private var stopped = false
    private var channel: Channel?
    /// Whether the relay paired the current connection (it then carries a peer link).
    private var paired = false
    /// Where host lookups answer (`GatedResolver`); nil: SwiftNIO's own resolver.
    var resolverGate: ResolverGate?

    init(host: String, port: Int, scope: DocumentScope = .general, secretTag: String? = nil, rendezvous: @escaping () -> [UInt8]?,
         loop: EventLoop, logger: Logger, makeHandler: @escaping MakeHandler) {
        self.host = host
        self.port = port
        self.scope = scope
        self.secretTag = secretTag
        self.rendezvous = rendezvous
        self.loop = loop
        self.logger = logger
        self.makeHandler = makeHandler
    }

    func start() { dial(attempt: 0) }

    /// Dials no more; the connection as it is stays.
    func stopDialing() { stopped = true }

    /// Dials no more and closes the connection.
    func stop() {
        stopped = true
        channel?.close(promise: nil)
    }

    /// Dials no more and closes a connection still waiting for a partner; a paired one (a link
    /// made with the secret, an invitation just used up) stays.
    func stopWaiting() {
        stopped = true
        if !paired { channel?.close(promise: nil) }
    }

    private func dial(attempt: Int) {
        guard !stopped else { return }
        guard let value = rendezvous() else {
            stopped = true
            logger.info("relay \(host):\(port): no secret of \(scope) to dial with any more")
            return
        }
        paired = false
        let preamble = RelayWire.preamble(rendezvous: value)
        ClientBootstrap(group: loop)
            .resolver(resolverGate.map { GatedResolver(loop: loop, gate: $0) })
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connectTimeout(.seconds(10))
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelayReplyHandler(
                        preamble: preamble,
                        onPaired: { [self] accepts in
                            paired = true
                            logger.info("paired through the relay \(host):\(port); this side \(accepts ? "accepts" : "connects")")
                            return makeHandler(accepts) { [self] reason, wasEstablished in
                                guard !reason.contains("disconnected by an editor") else { return }
                                redial(reason, attempt: wasEstablished ? 0 : attempt + 1)
                            }
                        },
                        onUnpaired: { [self] reason, status in
                            redial(reason, attempt: status == .expired ? -1 : attempt + 1)
                        }))
                }
            }
            .connect(host: host, port: port)
            .whenComplete { [self] result in
                switch result {
                case .success(let channel): self.channel = channel
                case .failure(let error): redial("cannot connect to the relay: \(error)", attempt: attempt + 1)
                }
            }
    }

    /// Dials again after the backoff of `attempt` (-1: at once).
    private func redial(_ reason: String, attempt: Int) {
        guard !stopped else { return }
        let delay = attempt < 0 ? 0 : min(30.0, 0.5 * pow(2.0, Double(min(attempt, 6))))
        logger.info("relay \(host):\(port): dialing again in \(delay) s (\(reason))")
        loop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) { [self] in dial(attempt: max(attempt, 0)) }
    }
}
