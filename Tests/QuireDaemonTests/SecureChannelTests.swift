import JSON
import Testing
@testable import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// The secure layer of a peer link on its own: two `SecureChannel`s, no daemon, no socket, the
/// bytes between them in the test's hands.
@Suite struct SecureChannelTests {
    static let secret = Array("a secret of at least sixteen bytes".utf8)

    /// One side: its channel, what it was asked to do, and the bytes it wrote.
    final class Side {
        let channel: SecureChannel
        var actions: [SecureChannel.Action] = []
        var closed = false

        init(_ channel: SecureChannel) { self.channel = channel }

        /// Writes `frame` as a link does: sealed as the channel says at the moment of writing.
        func bytes(of frame: PeerFrame) -> [UInt8] { channel.frame(frame.body(), seals: channel.sealsOutput) }

        var established: SecureChannel.Peer? {
            actions.lazy.compactMap { if case .established(let peer) = $0 { return peer } else { return nil } }.first
        }
        var delivered: [PeerFrame] { actions.compactMap { if case .deliver(let frame) = $0 { return frame } else { return nil } } }
        var endReason: String? {
            actions.lazy.compactMap { action -> String? in
                switch action {
                case .cut(let reason), .finish(let reason): return reason
                default: return nil
                }
            }.first
        }
    }

    static func side(replica: UInt64, incoming: Bool, secret: [UInt8] = secret, nonce: UInt8, trusted: Set<String> = [],
                     identity: PeerIdentity = PeerIdentity()) -> Side {
        Side(SecureChannel(secret: secret, nonce: Array(repeating: nonce, count: 32), incoming: incoming, handshakeFrameBytes: 4096,
                           peerFrameBytes: 1 << 20, trustedFingerprints: trusted,
                           credentials: { .init(replica: ReplicaID(replica), user: "user \(replica)", identity: identity) }))
    }

    /// Runs the handshake between `a` (connects) and `b` (accepts), delivering each side's bytes
    /// to the other `chunk` bytes at a time, until neither has anything to send. A side that cuts
    /// says goodbye as a link does.
    static func exchange(_ a: Side, _ b: Side, chunk: Int = .max) {
        var toB = a.bytes(of: a.channel.start()), toA = b.bytes(of: b.channel.start())
        while !toA.isEmpty || !toB.isEmpty {
            let (forA, forB) = (toA, toB)
            toA = []
            toB = []
            toB += deliver(forA, to: a, chunk: chunk)
            toA += deliver(forB, to: b, chunk: chunk)
        }
    }

    /// Feeds `bytes` to `side`; returns what it writes in answer.
    static func deliver(_ bytes: [UInt8], to side: Side, chunk: Int) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < bytes.count, !side.closed {
            let end = min(bytes.count, start + min(chunk, bytes.count))
            for action in side.channel.receive(bytes[start..<end]) where !side.closed {
                side.actions.append(action)
                switch action {
                case .send(let frame): out += side.bytes(of: frame)
                case .cut(let reason):
                    out += side.bytes(of: .bye(reason: reason))
                    side.closed = true
                case .finish: side.closed = true
                case .established, .deliver: break
                }
            }
            start = end
        }
        return out
    }

    @Test(arguments: [Int.max, 1, 7])
    func bothSidesAuthenticateAndSealedFramesComeThrough(chunk: Int) throws {
        let a = Self.side(replica: 1, incoming: false, nonce: 1), b = Self.side(replica: 2, incoming: true, nonce: 2)
        Self.exchange(a, b, chunk: chunk)
        #expect(a.established?.replica == ReplicaID(2) && b.established?.replica == ReplicaID(1))
        #expect(a.established?.user == "user 2" && b.established?.user == "user 1")
        #expect(a.endReason == nil && b.endReason == nil && a.channel.isEncrypted && b.channel.isEncrypted)
        // After the handshake: a sealed document list arrives as sent, and its text is not on the wire.
        let list = PeerFrame.documents(["initial": true, "documents": [["uri": "secret-plans", "id": "7", "version": [:]]]])
        let wire = a.bytes(of: list)
        #expect(!String(decoding: wire, as: UTF8.self).contains("secret-plans"))
        _ = Self.deliver(wire, to: b, chunk: chunk)
        #expect(b.delivered == [list])
    }

    @Test func theFingerprintsAreEachOthersIdentityKeys() {
        let aKey = PeerIdentity(), bKey = PeerIdentity()
        let a = Self.side(replica: 1, incoming: false, nonce: 1, identity: aKey), b = Self.side(replica: 2, incoming: true, nonce: 2, identity: bKey)
        Self.exchange(a, b)
        #expect(a.established?.fingerprint == bKey.fingerprint && b.established?.fingerprint == aKey.fingerprint)
    }

    @Test func aWrongSecretEndsBothSidesAndDeliversNothing() {
        let a = Self.side(replica: 1, incoming: false, nonce: 1)
        let b = Self.side(replica: 2, incoming: true, secret: Array("another secret, sixteen bytes+".utf8), nonce: 2)
        Self.exchange(a, b)
        #expect(b.endReason?.hasPrefix("authentication failed: wrong secret") == true)
        #expect(a.endReason?.hasPrefix("authentication failed: the peer refused our proof") == true, "\(a.actions)")
        #expect(a.established == nil && b.established == nil && a.delivered.isEmpty && b.delivered.isEmpty)
    }

    /// A frame that does not open is a wrong secret even when its first byte is a goodbye's
    /// kind, as a sealed frame's is 1 time in 256 (it was read as a goodbye of garbage): an
    /// accepting side takes no goodbye in the clear once the hellos are exchanged, a connector
    /// only one whose reason is UTF-8, as the accepting side's refusal always is.
    @Test func aFrameThatDoesNotOpenIsAWrongSecretWhateverItsFirstByte() {
        let garbage: [UInt8] = [6] + (0..<48).map { UInt8(0x80 | ($0 * 37 & 0x7F)) }
        #expect(String(validating: garbage.dropFirst(), as: UTF8.self) == nil)
        let connector = Self.side(replica: 1, incoming: false, nonce: 1), acceptor = Self.side(replica: 2, incoming: true, nonce: 2)
        let helloOfConnector = connector.bytes(of: connector.channel.start()), helloOfAcceptor = acceptor.bytes(of: acceptor.channel.start())
        _ = Self.deliver(helloOfConnector, to: acceptor, chunk: .max)
        _ = Self.deliver(PeerFrame.framed(garbage), to: acceptor, chunk: .max)
        #expect(acceptor.endReason?.hasPrefix("authentication failed: wrong secret") == true, "\(acceptor.actions)")
        let byeInTheClear = Self.side(replica: 3, incoming: true, nonce: 3)
        _ = byeInTheClear.channel.start()
        _ = Self.deliver(helloOfConnector, to: byeInTheClear, chunk: .max)
        _ = Self.deliver(PeerFrame.bye(reason: "f(x) <A17>").encoded(), to: byeInTheClear, chunk: .max)
        #expect(byeInTheClear.endReason?.hasPrefix("authentication failed: wrong secret") == true, "\(byeInTheClear.actions)")
        _ = Self.deliver(helloOfAcceptor, to: connector, chunk: .max)
        _ = Self.deliver(PeerFrame.framed(garbage), to: connector, chunk: .max)
        #expect(connector.endReason?.hasPrefix("authentication failed: wrong secret") == true, "\(connector.actions)")
        #expect(connector.established == nil && acceptor.established == nil && byeInTheClear.established == nil)
    }

    @Test func aTamperedFrameCutsTheChannelAndIsNotDelivered() {
        let a = Self.side(replica: 1, incoming: false, nonce: 1), b = Self.side(replica: 2, incoming: true, nonce: 2)
        Self.exchange(a, b)
        var wire = a.bytes(of: .documents(["initial": false, "documents": []]))
        wire[wire.count - 1] ^= 1
        _ = Self.deliver(wire, to: b, chunk: .max)
        #expect(b.endReason?.hasPrefix("a frame failed its integrity check") == true)
        #expect(b.delivered.isEmpty)
        // Ended: nothing more comes out of it.
        #expect(b.channel.receive(a.bytes(of: .heartbeat)).isEmpty)
    }

    @Test func aFrameOtherThanTheHandshakesBeforeAuthenticationIsRefused() {
        let b = Self.side(replica: 2, incoming: true, nonce: 2)
        _ = b.channel.start()
        let actions = b.channel.receive(PeerFrame.documents(["initial": true, "documents": []]).encoded())
        #expect(actions == [.cut("documents before authentication")])
    }

    @Test func anOversizedFrameBeforeAuthenticationIsRefusedAtItsLength() {
        let b = Self.side(replica: 2, incoming: true, nonce: 2)
        _ = b.channel.start()
        // Only the length prefix: the channel refuses before the body arrives.
        #expect(b.channel.receive([0, 0, 0x10, 0x01]) == [.cut("frame of 4097 bytes exceeds the limit of 4096 before authentication")])
    }

    @Test func aPinnedSideRefusesAKeyNotAmongItsPins() {
        let a = Self.side(replica: 1, incoming: false, nonce: 1)
        let b = Self.side(replica: 2, incoming: true, nonce: 2, trusted: [PeerIdentity.normalized(PeerIdentity().fingerprint)])
        Self.exchange(a, b)
        #expect(b.endReason?.contains("is not among the pinned fingerprints") == true, "\(b.actions)")
        #expect(b.established == nil && a.established == nil)
    }

    @Test func aPeerWithAnotherProtocolVersionIsRefused() {
        let b = Self.side(replica: 2, incoming: true, nonce: 2)
        _ = b.channel.start()
        let hello = PeerFrame.hello(["protocol": 4, "nonce": .string(String(repeating: "11", count: 32)),
                                     "key": .string(String(repeating: "22", count: 32)), "role": "connect"])
        #expect(b.channel.receive(hello.encoded()) == [.cut("protocol version mismatch: the peer speaks 4, this daemon \(SecureChannel.protocolVersion)")])
    }

    @Test func bothSidesConnectingIsRefused() {
        let a = Self.side(replica: 1, incoming: false, nonce: 1), b = Self.side(replica: 2, incoming: false, nonce: 2)
        Self.exchange(a, b)
        #expect(a.endReason?.hasPrefix("both sides connected") == true || b.endReason?.hasPrefix("both sides connected") == true)
        #expect(a.established == nil && b.established == nil)
    }
}
