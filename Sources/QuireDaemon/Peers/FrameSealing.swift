import Crypto

/// Seals the frames one side of a peer link sends after the handshake: ChaCha20-Poly1305 with
/// the direction's key and a nonce that counts the frames sent (never reused: a key lives for
/// one link, and 2^64 frames are never reached).
///
/// Guarantees: a sealed body is the ciphertext followed by its 16-byte tag; the length prefix
/// around it is authenticated too (it is the associated data), so no byte of a frame can change
/// unnoticed.
struct FrameSealer {
    private let key: SymmetricKey
    private var counter: UInt64 = 0

    init(key: SymmetricKey) {
        self.key = key
    }

    /// The next frame: plaintext `body` sealed, with its length prefix.
    mutating func seal(_ body: [UInt8]) -> [UInt8] {
        let length = PeerHandshake.bigEndian(UInt32(body.count + FrameOpener.tagBytes))
        // A counter nonce of 12 bytes is always a valid ChaChaPoly nonce.
        guard let nonce = try? ChaChaPoly.Nonce(data: FrameOpener.nonceBytes(counter)),
              let box = try? ChaChaPoly.seal(body, using: key, nonce: nonce, authenticating: length) else { return [] }
        counter += 1
        return length + Array(box.ciphertext) + Array(box.tag)
    }
}

/// Opens the frames the other side sealed, in the order it sealed them.
///
/// Guarantees: a frame opens only if it is the next one the peer sealed with this link's key,
/// unchanged: a tampered, replayed, reordered, dropped or reflected frame fails, and after a
/// failure the link is cut (the counter does not move).
struct FrameOpener {
    static let tagBytes = 16
    private let key: SymmetricKey
    private var counter: UInt64 = 0

    init(key: SymmetricKey) {
        self.key = key
    }

    struct Failure: Error {}

    /// The plaintext body of sealed frame body `sealed` (as the framer cut it out).
    mutating func open(_ sealed: [UInt8]) throws(Failure) -> [UInt8] {
        guard sealed.count >= Self.tagBytes else { throw Failure() }
        let length = PeerHandshake.bigEndian(UInt32(sealed.count))
        do {
            let box = try ChaChaPoly.SealedBox(nonce: ChaChaPoly.Nonce(data: Self.nonceBytes(counter)),
                                               ciphertext: sealed.dropLast(Self.tagBytes), tag: sealed.suffix(Self.tagBytes))
            let body = try ChaChaPoly.open(box, using: key, authenticating: length)
            counter += 1
            return Array(body)
        } catch {
            throw Failure()
        }
    }

    /// Four zero bytes and the frame counter, big-endian.
    static func nonceBytes(_ counter: UInt64) -> [UInt8] {
        [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
    }
}
