// Peers/: one link to another daemon. `SecureChannel` (framing limits, handshake, sealing) knows
// no daemon; `PeerSession` (documents, sync, states, rebase, validation, presence, digests) sees
// only authenticated, decoded messages (`PeerMessage`); `PeerLink` joins them to a byte stream
// and paces its output. May call: the core through `PeerHost`, Documents, QuireProtocol and
// ReplicatingTypes; never the `Daemon`, never Transport or Editor.
import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// The state of a peer link: handshaking until the peer proved the secret and its identity.
public enum PeerLinkState: String, Sendable { case handshaking, established, closed }

/// One link to another Quire daemon, over any byte stream: a handshake (protocol version, an
/// ephemeral key exchange keyed by the shared secret, proofs of the secret and of each side's
/// identity key bound to this link's transcript), then sealed frames only: delta sync of every
/// document, then live operations both ways (`protocol/peer.md`).
///
/// Guarantees: nothing the peer sends touches a document, and nothing of a document is sent,
/// before the peer has proven the secret on this very link; every frame after the hellos is
/// encrypted and authenticated, so a tampered, replayed, reordered or dropped frame cuts the
/// link before anything of it is used. Before authentication a frame may hold at most
/// `maximumHandshakeFrameBytes` and the handshake must end within `peerHandshakeTimeout`.
/// What a peer lacks is sent at the pace it reads, and a peer that stops reading is cut once
/// its live output waiting passes a bound (`PeerLink+Output`).
/// A peer that speaks garbage, sends an oversized frame, an operation that can never apply or a
/// version vector claiming edits this daemon never made is cut off with a logged reason, and
/// the operations of a rejected frame are not applied (each frame is validated whole first).
public final class PeerLink: PeerSessionLink {
    public typealias State = PeerLinkState

    /// Protocol version spoken by this build; a peer with another one is refused.
    public static let protocolVersion = SecureChannel.protocolVersion
    /// A user name from a peer is cut to this many characters (control characters removed).
    public static let maximumUserNameLength = DisplayText.maximumNameLength
    /// A reason for closing a link, ours or the peer's, is cut to this many characters (control
    /// and format characters removed) before it is logged, shown or sent.
    public static let maximumReasonLength = DisplayText.maximumReasonLength

    public let id: Int
    /// The parts of the daemon this link may call (`PeerHost`), never the `Daemon` itself.
    unowned let daemon: any PeerHost
    /// Hands bytes to the transport (held back while the store has edits not yet durable).
    let write: ([UInt8]) -> Void
    private let closeTransport: () -> Void
    /// Framing, handshake and sealing (`SecureChannel`): what comes in is delivered here only
    /// once the peer proved the secret and its identity.
    let channel: SecureChannel
    /// The document side: lists, sync, states, presence, repair (`PeerSession`).
    private(set) var session: PeerSession!
    public private(set) var state = State.handshaking
    /// True once the handshake completed (it stays true after the link closes).
    public private(set) var wasEstablished = false
    /// The peer's user name (at most `maximumUserNameLength` characters, no control characters).
    public private(set) var peerUser: String?
    /// The peer daemon's replica ID, once it proved the secret.
    private(set) var peerReplica: ReplicaID?
    /// The fingerprint of the peer's identity key, once it proved it holds that key.
    public private(set) var peerFingerprint: String?
    public private(set) var peerKey: [UInt8]?
    /// When set, only a peer with this identity fingerprint is accepted on this link.
    public var expectedFingerprint: String? {
        get { channel.expectedFingerprint }
        set { channel.expectedFingerprint = newValue }
    }
    /// Whether the peer connected to this daemon (and so counts against the handshake cap): the
    /// accepting side, which shows nothing that depends on the secret before the connector proved it.
    var isIncoming: Bool { channel.isIncoming }
    /// The remote host (without port) of an incoming TCP link, for the per-address handshake cap.
    var remoteHost: String?
    /// Whether the peer's hello arrived (an incoming link must send it within `peerHelloTimeout`).
    public var heardHello: Bool { channel.heardHello }
    /// Whether frames on this link are encrypted (from the first frame after the hellos on).
    public var isEncrypted: Bool { channel.isEncrypted }
    public private(set) var closeReason: String?
    public private(set) var bytesIn = 0
    public internal(set) var bytesOut = 0
    public var operationsIn: Int { session.operationsIn }
    public var operationsOut: Int { session.operationsOut }
    /// Elements (characters and tombstones) this daemon has and the peer is not known to have.
    public var behind: Int { session.behind }
    /// Digest rounds on this link (`PeerSession+Digests`).
    var digests: DigestExchange {
        get { session.digests }
        set { session.digests = newValue }
    }
    /// What this link has to write, paced to what the peer reads (`PeerLink+Output`).
    var outbox = PeerOutbox()
    /// Set once live output passed `maximumUnsentPeerBytes`: nothing more is written, the link
    /// is being cut.
    var outputOverflowed = false
    /// The outbox is being written (a report of bytes taken meanwhile only counts them), and a
    /// turn that writes it is scheduled.
    var pumpingOutput = false
    var outputPumpScheduled = false
    /// Runs a closure on a later turn of the link's event loop (set by a paced transport).
    var later: ((@escaping () -> Void) -> Void)?

    /// Called once when the link closes, with the reason.
    public var onClose: ((String) -> Void)?
    /// Where the link goes, for status ("tcp 127.0.0.1:7070", "command ssh ...", "stdio").
    public var address = ""
    /// Seconds (on the caller's clock) when the peer last sent anything.
    private var lastHeard: Double?
    private var lastSent: Double?

    /// The scopes of the secrets the channel may speak with, in its order.
    private let secretScopes: [DocumentScope]
    /// The secrets themselves, in the same order: which one made the link is told by its tag.
    private let secretValues: [[UInt8]]

    /// `secrets`: what the link may speak with (a connector: the one of the scope it dials;
    /// an accepting side: every secret held, the connector's proof picks one).
    init(id: Int, daemon: any PeerHost, secrets: [(scope: DocumentScope, secret: [UInt8])], nonce: [UInt8], incoming: Bool, remoteHost: String?,
         write: @escaping ([UInt8]) -> Void, close: @escaping () -> Void) {
        self.id = id
        self.daemon = daemon
        self.write = daemon.gated(write)
        self.closeTransport = close
        self.remoteHost = remoteHost
        let secrets = incoming ? secrets : Array(secrets.prefix(1))
        secretScopes = secrets.map(\.scope)
        secretValues = secrets.map(\.secret)
        let configuration = daemon.configuration
        channel = SecureChannel(secrets: secrets.map(\.secret), nonce: nonce, incoming: incoming, handshakeFrameBytes: configuration.maximumHandshakeFrameBytes,
                                peerFrameBytes: configuration.maximumPeerFrameBytes, trustedFingerprints: configuration.trustedPeerFingerprints,
                                credentials: { [unowned daemon] in .init(replica: daemon.replica, user: daemon.userName, identity: daemon.identity) })
        session = PeerSession(daemon: daemon, link: self)
    }

    private var logger: Logger { daemon.logger }

    /// Opens the handshake; both sides call it as soon as the stream is up.
    /// The hello carries only the protocol version, a nonce and an ephemeral public key: who
    /// this daemon is goes in the sealed `auth` that follows.
    public func start() {
        send(channel.start())
    }

    /// Bytes from the peer: through the secure channel, then what it delivers to the session.
    public func receive(_ bytes: some Collection<UInt8>) {
        guard state != .closed else { return }
        bytesIn += bytes.count
        heardFrom = true
        for action in channel.receive(bytes) {
            guard state != .closed else { return }
            switch action {
            case .send(let frame): send(frame)
            case .established(let peer): established(peer)
            case .deliver(let frame):
                do {
                    try session.handle(frame)
                } catch {
                    cut("malformed frame: \(error)")
                }
            case .cut(let reason): cut(reason)
            case .finish(let reason): finish(reason)
            }
        }
    }

    /// The handshake completed: the link is up; a project's link first gets the project's tree
    /// (`ProjectFrames`), then the peer gets our document list (of the link's scope only).
    private func established(_ peer: SecureChannel.Peer) {
        guard let scope, daemon.isHeld(scope) else {
            return cut("no longer shared: the secret this link was made with was removed")
        }
        peerReplica = peer.replica
        peerFingerprint = peer.fingerprint
        peerKey = peer.identity
        peerUser = peer.user
        state = .established
        wasEstablished = true
        logger.info("peer link \(id): established with \(peer.user.isEmpty ? "replica \(peer.replica.rawValue)" : peer.user), key \(peer.fingerprint), \(scope)")
        if let refusal = daemon.refusal(ofEstablished: self) { return cut(refusal) }
        if case .project(let key) = scope { daemon.projectFrames?.projectLinkEstablished(self, key: key) }
        guard state == .established else { return }
        session.sendDocumentList()
        daemon.peerLinkEstablished(self)
    }

    /// How long the handshake may take, in seconds.
    public var handshakeTimeout: Double { daemon.configuration.peerHandshakeTimeout }

    /// The handshake did not end in time (`Configuration.peerHandshakeTimeout`).
    public func handshakeTimedOut() {
        guard state == .handshaking else { return }
        cut("no handshake within \(Int(handshakeTimeout)) seconds")
    }

    /// How long a peer that connected here has to send its hello, in seconds.
    public var helloTimeout: Double { daemon.configuration.peerHelloTimeout }

    /// An incoming link's peer sent no hello in time (`Configuration.peerHelloTimeout`): its
    /// handshake slot goes to someone else.
    public func helloTimedOut() {
        guard state == .handshaking, isIncoming, !heardHello else { return }
        let seconds = helloTimeout == helloTimeout.rounded() ? "\(Int(helloTimeout))" : "\(helloTimeout)"
        cut("no hello within \(seconds) seconds")
    }

    /// The end of a read from the peer: editors hear what this link's operations changed, once
    /// they are durable (`OutputGate.endRead`).
    func endRead() {
        daemon.endRead()
    }

    /// The stream ended.
    public func endOfInput() {
        guard state != .closed else { return }
        finish("the peer closed the connection" + (channel.bufferedByteCount > 0 ? " in the middle of a frame" : ""))
    }

    private var heardFrom = false
    /// When the first tick saw this link (a bound on the handshake for any transport).
    private var startedAt: Double?

    /// Heartbeats and dead-peer detection, driven by a timer: sends a heartbeat when nothing
    /// was sent for `interval`, and cuts the link when nothing was heard for `3 * interval`.
    public func tick(now: Double, interval: Double) {
        guard state != .closed else { return }
        if startedAt == nil { startedAt = now }
        if state == .handshaking, let started = startedAt, now - started > handshakeTimeout {
            return handshakeTimedOut()
        }
        if state == .handshaking, isIncoming, !heardHello, let started = startedAt, now - started > helloTimeout {
            return helloTimedOut()
        }
        if heardFrom || lastHeard == nil { lastHeard = now; heardFrom = false }
        if let last = lastHeard, now - last > 3 * interval {
            return cut("no word from the peer for \(Int(now - last)) seconds")
        }
        if state == .established, now - (lastSent ?? 0) >= interval {
            send(.heartbeat)
            lastSent = now
        }
    }

    /// `text` as something safe to show (`DisplayText.clean`).
    static func displayName(_ text: String, limit: Int = maximumUserNameLength) -> String {
        DisplayText.clean(text, limit: limit)
    }

    // MARK: What the core asks of the link (`PeerEndpoint`), done by the session

    func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) {
        session.sendOperations(operations, of: document)
    }
    func sendPresence(_ message: PresenceMessage) { session.sendPresence(message) }
    func sendStability(_ message: JSONValue) { session.sendStability(message) }
    /// The scope of the secret this link speaks with: known from the start on a link this daemon
    /// dialed, once the connector's proof checked out on one it accepted; fixed for its life.
    var scope: DocumentScope? { channel.secretIndex.flatMap { secretScopes.indices.contains($0) ? secretScopes[$0] : nil } }
    /// The tag of the secret this link was made with (`PeerSecret.tag(of:)`), once known as `scope` is:
    /// which of a project's secrets (member or invitation) opened it.
    var secretTag: String? {
        channel.secretIndex.flatMap { secretValues.indices.contains($0) ? PeerSecret.tag(of: secretValues[$0]) : nil }
    }
    func sendProjectFrame(key: String, payload: [UInt8]) { session.sendProjectFrame(key: key, payload: payload) }
    func announce(_ document: SharedDocument) { session.announce(document) }
    func sendWhole(_ document: SharedDocument) { session.sendWhole(document) }
    func retryRebase(of document: SharedDocument) { session.retryRebase(of: document) }
    func takeQueuedPresence(now: Double) -> [PresenceMessage] { session.takeQueuedPresence(now: now) }
    func refusedPresence(_ reason: String) { session.refusedPresence(reason) }
    func sendDueDigests() { session.sendDueDigests() }
    func hasCaughtUp(on uri: String) -> Bool { session.hasCaughtUp(on: uri) }
    func mayChange(_ subject: String, what: String) -> Bool { session.mayChange(subject, what: what) }

    /// Disconnects a misbehaving peer, saying why (to it and to the log).
    func cut(_ reason: String) {
        guard state != .closed else { return }
        let reason = Self.displayName(reason, limit: Self.maximumReasonLength)
        logger.warning("peer link \(id): cut off: \(reason)")
        send(.bye(reason: reason))
        finish(reason)
    }

    /// Closes the link without blame (shutting down, or the peer left).
    public func close(_ reason: String) {
        guard state != .closed else { return }
        send(.bye(reason: reason))
        finish(reason)
    }

    private func finish(_ reason: String) {
        let reason = Self.displayName(reason, limit: Self.maximumReasonLength)
        state = .closed
        outbox.dropQueued()
        closeReason = reason
        logger.info("peer link \(id): closed: \(reason)")
        daemon.commit()   // what was held for durability, the goodbye included, goes out first
        closeTransport()
        daemon.peerLinkClosed(self)
        // What its closing logged (when each document's holders were last linked with: sharing
        // records of their logs) is made durable, and the editors told it left, now: no read
        // may follow to end.
        daemon.commit()
        onClose?(reason)
    }
}
