import QuireProtocol
import ReplicatingTypes

/// The secure layer of a peer link, under the session that syncs documents: framing with its
/// limits, the handshake (hellos, proofs of the secret, identities and pins) and the sealing of
/// every frame after the hellos. Bytes in, actions out: it knows no daemon, no document and no
/// transport, so it is tested on its own (`SecureChannelTests`).
///
/// Guarantees: nothing but handshake frames is delivered before the peer proved the secret and
/// its identity on this very link (`.established` comes first); every frame after the hellos is
/// opened and authenticated, so a tampered, replayed, reordered or dropped frame ends the channel
/// (`.cut`) before anything of it is delivered. Before authentication a frame may hold at most
/// `handshakeFrameBytes`; after, `peerFrameBytes`. After a `.cut` or `.finish` it produces nothing.
///
/// Several secrets (protocol/decisions/project-sharing.md): a connector speaks with one; an
/// accepting side may hold several, and the connector's first sealed frame (its proof) picks
/// the link's secret (`SecretCandidates`, `secretIndex`). With one secret the handshake is
/// exactly the single-secret one.
final class SecureChannel {
    /// What the link does with what came in, in this order.
    enum Action: Equatable {
        /// A handshake frame to send (the link seals it as `sealsOutput` says when it writes it).
        case send(PeerFrame)
        /// The peer proved the secret and its identity: who it is.
        case established(Peer)
        /// An authenticated frame for the session.
        case deliver(PeerFrame)
        /// The peer misbehaved: cut the link with this reason.
        case cut(String)
        /// The peer ended the link (its goodbye, or it refused our proof).
        case finish(String)
    }

    /// The peer, once authenticated.
    struct Peer: Equatable {
        var replica: ReplicaID
        var user: String
        var fingerprint: String
        /// Its Ed25519 identity key (32 bytes).
        var identity: [UInt8] = []
        /// The index (in the channel's `secrets`) of the secret the link was made with.
        var secretIndex = 0
    }

    /// What this side says of itself in its `auth`.
    struct Credentials {
        var replica: ReplicaID
        var user: String
        var identity: PeerIdentity
    }

    static let protocolVersion = 5

    let isIncoming: Bool
    /// When set, only a peer with this identity fingerprint is accepted.
    var expectedFingerprint: String?
    private let trustedFingerprints: Set<String>
    private let peerFrameBytes: Int
    private let credentials: () -> Credentials
    private var framer: PeerFramer
    private let handshake: PeerHandshake
    private var ourHello: [UInt8] = []
    private var theirNonce: [UInt8]?
    private var agreement: PeerHandshake.Agreement?
    /// An accepting side with several secrets, between the hellos and the connector's proof:
    /// what the hellos settled, from which the proof picks a secret.
    private var candidates: PeerHandshake.Exchange?
    /// Which of the secrets this link speaks with, once known (a connector's from the start).
    private(set) var secretIndex: Int?
    /// How many secrets this side may speak with.
    let secretCount: Int
    private var sealer: FrameSealer?
    private var opener: FrameOpener?
    private(set) var theirProofVerified = false
    private(set) var sentProof = false
    private var sentAuth = false
    /// Whether the peer's hello arrived.
    private(set) var heardHello = false
    private(set) var peer: Peer?
    private var ended = false

    convenience init(secret: [UInt8], nonce: [UInt8], incoming: Bool, handshakeFrameBytes: Int, peerFrameBytes: Int,
                     trustedFingerprints: Set<String> = [], credentials: @escaping () -> Credentials) {
        self.init(secrets: [secret], nonce: nonce, incoming: incoming, handshakeFrameBytes: handshakeFrameBytes, peerFrameBytes: peerFrameBytes,
                  trustedFingerprints: trustedFingerprints, credentials: credentials)
    }

    /// `secrets`: at least one; a connector (`incoming` false) speaks with the first only.
    init(secrets: [[UInt8]], nonce: [UInt8], incoming: Bool, handshakeFrameBytes: Int, peerFrameBytes: Int,
         trustedFingerprints: Set<String> = [], credentials: @escaping () -> Credentials) {
        let secrets = incoming ? secrets : Array(secrets.prefix(1))
        handshake = PeerHandshake(secrets: secrets, nonce: nonce)
        secretCount = secrets.count
        if secrets.count == 1 { secretIndex = 0 }
        isIncoming = incoming
        framer = PeerFramer(maximumFrameBytes: handshakeFrameBytes)
        self.peerFrameBytes = peerFrameBytes
        self.trustedFingerprints = trustedFingerprints
        self.credentials = credentials
    }

    /// Whether frames are encrypted (from the first frame after the hellos on).
    var isEncrypted: Bool { sealer != nil || candidates != nil }
    /// Whether what this side sends now is sealed: once the hellos were exchanged and, on the
    /// accepting side, once the connector proved the secret (before, a stranger gets nothing to
    /// test guesses of the secret against).
    var sealsOutput: Bool { sentProof || theirProofVerified }
    /// Bytes of an unfinished frame.
    var bufferedByteCount: Int { framer.bufferedByteCount }
    /// The largest frame the peer may send now.
    var maximumFrameBytes: Int { framer.maximumFrameBytes }
    private var isPinned: Bool { expectedFingerprint != nil || !trustedFingerprints.isEmpty }

    /// Our hello, to send as soon as the stream is up (in the clear).
    func start() -> PeerFrame {
        let hello = PeerFrame.hello(HandshakeMessage.Hello.json(version: Self.protocolVersion, nonce: handshake.ourNonce, key: handshake.ourKey,
                                                                role: isIncoming ? .accept : .connect))
        ourHello = hello.body()
        return hello
    }

    /// `body` framed for the wire: sealed when `seals` and the keys exist.
    func frame(_ body: [UInt8], seals: Bool) -> [UInt8] {
        (seals ? sealer?.seal(body) : nil) ?? PeerFrame.framed(body)
    }

    /// Bytes from the peer: what to do, in order.
    func receive(_ bytes: some Collection<UInt8>) -> [Action] {
        var actions: [Action] = []
        for event in framer.feed(bytes) where !ended {
            switch event {
            case .tooLarge(let size):
                end(.cut("frame of \(size) bytes exceeds the limit of \(framer.maximumFrameBytes)" + (peer == nil ? " before authentication" : "")), &actions)
            case .frame(let body):
                guard let plain = opened(body, &actions) else { continue }
                do {
                    handle(try PeerFrame.decode(plain), &actions)
                } catch {
                    end(.cut("malformed frame: \(error)"), &actions)
                }
            }
        }
        return actions
    }

    private func end(_ action: Action, _ actions: inout [Action]) {
        ended = true
        actions.append(action)
    }

    /// A frame body in the clear: as it came before the hellos were exchanged, opened after.
    private func opened(_ body: [UInt8], _ actions: inout [Action]) -> [UInt8]? {
        if candidates != nil, let plain = openedByCandidate(body) { return plain }
        guard opener != nil else {
            guard candidates == nil else { return refused(body, &actions) }
            return body
        }
        do {
            return try opener?.open(body)
        } catch {
            return refused(body, &actions)
        }
    }

    /// The connector's first sealed frame, opened by the secret it proves (`SecretCandidates`);
    /// that agreement becomes the link's.
    private func openedByCandidate(_ body: [UInt8]) -> [UInt8]? {
        guard let exchange = candidates, let chosen = SecretCandidates.choose(in: exchange, firstSealedFrame: body) else { return nil }
        candidates = nil
        agreement = chosen.agreement
        sealer = chosen.agreement.sealer
        opener = chosen.opener
        secretIndex = chosen.index
        return chosen.plain
    }

    /// A sealed frame that does not open: the peer's refusal in the clear, or a wrong secret or
    /// tampering. Ends the channel.
    private func refused(_ body: [UInt8], _ actions: inout [Action]) -> [UInt8]? {
        do {
            // An accepting side refuses a connector's proof with a goodbye in the clear (it seals
            // nothing before the proof checked out): take its reason. Only a connector gets one,
            // and only as UTF-8: a sealed frame that does not open begins with its kind byte 1
            // time in 256, and was then read as a goodbye of garbage, not as a wrong secret.
            if !isIncoming, !theirProofVerified, case .bye(let reason)? = try? PeerFrame.decode(body),
               String(validating: body.dropFirst(), as: UTF8.self) != nil {
                let reason = DisplayText.clean(reason, limit: 200)
                end(.finish(reason.hasPrefix("authentication failed") ? "authentication failed: the peer refused our proof of the secret (\(reason))"
                            : "the peer said goodbye: \(reason)"), &actions)
                return nil
            }
            end(.cut(!theirProofVerified
                     ? "authentication failed: wrong secret (the peer's first sealed frame does not open), or the handshake was tampered with"
                     : "a frame failed its integrity check: tampered with, replayed, reordered or dropped on the way"), &actions)
            return nil
        }
    }

    private func handle(_ frame: PeerFrame, _ actions: inout [Action]) {
        switch frame {
        case .hello(let json):
            guard theirNonce == nil, opener == nil else { return end(.cut("a second hello"), &actions) }
            let hello: HandshakeMessage.Hello
            do { hello = try HandshakeMessage.Hello(json: json, expectedVersion: Self.protocolVersion) } catch {
                return end(.cut(error.description), &actions)
            }
            heardHello = true
            guard hello.nonce != handshake.ourNonce else { return end(.cut("the peer sent back our own hello"), &actions) }
            guard hello.role != (isIncoming ? .accept : .connect) else {
                return end(.cut("both sides \(hello.role == .accept ? "accepted" : "connected"): one side of a link must connect, the other accept"), &actions)
            }
            let exchange: PeerHandshake.Exchange
            do {
                exchange = try handshake.agree(ourHello: ourHello, theirHello: PeerFrame.hello(json).body(), theirNonce: hello.nonce, theirKey: hello.key)
            } catch {
                return end(.cut(error.description), &actions)
            }
            theirNonce = hello.nonce
            if exchange.secretCount == 1 {
                let agreement = exchange.agreement(at: 0)
                opener = agreement.opener
                sealer = agreement.sealer
                self.agreement = agreement
            } else {
                candidates = exchange   // the connector's proof picks a secret (`openedByCandidate`)
            }
            // The connector proves the secret first; the accepting side sends nothing that
            // depends on the secret until that proof checked out.
            if !isIncoming { sendProof(waits: false, &actions) }
        case .proof(let json):
            // Only after the hellos, so only sealed: `opened` let it through.
            guard let agreement, !theirProofVerified else { return end(.cut("a proof out of order"), &actions) }
            let proof: HandshakeMessage.Proof
            do { proof = try HandshakeMessage.Proof(json: json) } catch { return end(.cut(error.description), &actions) }
            guard agreement.verifyTheirs(proof.proof) else {
                return end(.cut("authentication failed: the proof of the secret is not for this link"), &actions)
            }
            theirProofVerified = true
            if isIncoming {
                // A pinned daemon shows who it is only once the peer's key passed its pins.
                let waits = isPinned
                sendProof(waits: waits, &actions)
                if !waits { sendAuth(&actions) }
            } else if proof.waits {
                sendAuth(&actions)
            }
        case .auth(let json):
            guard let nonce = theirNonce, let agreement, theirProofVerified, peer == nil else { return end(.cut("authentication out of order"), &actions) }
            let auth: HandshakeMessage.Auth
            do { auth = try HandshakeMessage.Auth(json: json) } catch { return end(.cut(error.description), &actions) }
            guard PeerIdentity.isValid(auth.signature, of: PeerHandshake.identityMessage(transcript: agreement.transcript, senderNonce: nonce), by: auth.identity) else {
                return end(.cut("authentication failed: the identity signature is not for this link"), &actions)
            }
            let fingerprint = PeerIdentity.fingerprint(ofPublicKey: auth.identity)
            if let expected = expectedFingerprint, PeerIdentity.normalized(expected) != PeerIdentity.normalized(fingerprint) {
                return end(.cut("authentication failed: the peer's key \(fingerprint) is not the pinned \(expected)"), &actions)
            }
            if !trustedFingerprints.isEmpty, !trustedFingerprints.contains(PeerIdentity.normalized(fingerprint)) {
                return end(.cut("authentication failed: the peer's key \(fingerprint) is not among the pinned fingerprints"), &actions)
            }
            guard auth.replica != credentials().replica else { return end(.cut("the peer is this daemon itself"), &actions) }
            if !sentAuth { sendAuth(&actions) }
            guard !ended else { return }
            let peer = Peer(replica: auth.replica, user: auth.user, fingerprint: fingerprint, identity: auth.identity, secretIndex: secretIndex ?? 0)
            self.peer = peer
            framer.maximumFrameBytes = peerFrameBytes
            actions.append(.established(peer))
        case .bye(let reason):
            end(.finish("the peer said goodbye: \(DisplayText.clean(reason, limit: 200))"), &actions)
        case .heartbeat:
            if peer != nil { actions.append(.deliver(frame)) }
        case .documents, .operations, .state, .stability, .presence, .digest, .project:
            guard peer != nil else { return end(.cut("\(Self.preAuthenticationName(frame)) before authentication"), &actions) }
            actions.append(.deliver(frame))
        }
    }

    /// How a frame that came too early is named in the reason.
    private static func preAuthenticationName(_ frame: PeerFrame) -> String {
        switch frame {
        case .documents: return "documents"
        case .operations: return "operations"
        case .state: return "a document state"
        case .stability: return "a stability message"
        case .presence: return "presence"
        case .digest: return "a digest"
        case .project: return "a project frame"
        default: return frame.name
        }
    }

    /// Our sealed `proof`: the proof of the secret bound to this link, and nothing else.
    private func sendProof(waits: Bool, _ actions: inout [Action]) {
        guard let agreement, !sentProof else { return }
        sentProof = true
        actions.append(.send(.proof(HandshakeMessage.Proof(proof: agreement.ourProof, waits: waits).json)))
    }

    /// Our sealed `auth`: replica, user, identity key and its signature over the transcript.
    /// Sent only once the peer proved the secret on this link.
    private func sendAuth(_ actions: inout [Action]) {
        guard !sentAuth, theirProofVerified, let agreement else { return }
        sentAuth = true
        let ours = credentials()
        let message = PeerHandshake.identityMessage(transcript: agreement.transcript, senderNonce: handshake.ourNonce)
        do {
            let auth = HandshakeMessage.Auth(replica: ours.replica, user: ours.user, identity: ours.identity.publicKey,
                                             signature: try ours.identity.signature(for: message))
            actions.append(.send(.auth(auth.json)))
        } catch {
            end(.cut("cannot sign the handshake: \(error)"), &actions)
        }
    }
}
