import Crypto

/// The cryptography of a peer link's handshake (peer protocol 3, `protocol/decisions/peer-security.md`):
/// an ephemeral X25519 key exchange whose keys also depend on the shared secret, a transcript
/// hash of both hellos that every later proof is bound to, and the proofs themselves.
///
/// Guarantees:
/// 1. Without the secret no one derives the frame keys, so a wrong secret shows as the first
///    sealed frame (the peer's `auth`) failing to open.
/// 2. Each side's proof (an HMAC of the secret) and signature (its identity key) cover the
///    transcript, which holds both ephemeral keys and nonces: a proof made on one link does not
///    verify on another, so it can be neither replayed, reflected nor relayed.
/// 3. The two directions use different keys (each derived with its sender's nonce), so a frame
///    cannot be reflected back to its sender either.
struct PeerHandshake {
    static let label = "quire-peer-3"

    private let secret: [UInt8]
    let ourNonce: [UInt8]
    private let ephemeral = Curve25519.KeyAgreement.PrivateKey()

    init(secret: [UInt8], nonce: [UInt8]) {
        self.secret = secret
        ourNonce = nonce
    }

    var ourKey: [UInt8] { Array(ephemeral.publicKey.rawRepresentation) }

    /// What both sides learn from the two hellos.
    struct Agreement {
        /// Hash of both hello bodies, in a canonical order: what proofs are bound to.
        var transcript: [UInt8]
        var sealer: FrameSealer
        var opener: FrameOpener
    }

    /// Why a hello cannot start a session.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Derives the session from our hello body, theirs, and their nonce and ephemeral key.
    func agree(ourHello: [UInt8], theirHello: [UInt8], theirNonce: [UInt8], theirKey: [UInt8]) throws(Failure) -> Agreement {
        guard theirNonce != ourNonce else { throw Failure(description: "the peer sent back our own hello") }
        let shared: [UInt8]
        do {
            let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: theirKey)
            shared = try ephemeral.sharedSecretFromKeyAgreement(with: publicKey).withUnsafeBytes { Array($0) }
        } catch {
            throw Failure(description: "the peer's key is not an X25519 public key")
        }
        // A low-order point gives an all-zero secret that an attacker could predict.
        guard shared.contains(where: { $0 != 0 }) else { throw Failure(description: "the peer's key is a low-order point") }
        let (first, second) = ourHello.lexicographicallyPrecedes(theirHello) ? (ourHello, theirHello) : (theirHello, ourHello)
        var hash = SHA256()
        hash.update(data: Array(Self.label.utf8))
        for hello in [first, second] {
            hash.update(data: Self.bigEndian(UInt32(hello.count)))
            hash.update(data: hello)
        }
        let transcript = Array(hash.finalize())
        let material = SymmetricKey(data: shared + secret)
        func key(sentBy nonce: [UInt8]) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: material, salt: transcript,
                                   info: Array("\(Self.label) frames ".utf8) + nonce, outputByteCount: 32)
        }
        return Agreement(transcript: transcript, sealer: FrameSealer(key: key(sentBy: ourNonce)),
                         opener: FrameOpener(key: key(sentBy: theirNonce)))
    }

    /// The sender's proof of the secret on this link: HMAC-SHA256 over the transcript, the
    /// sender's nonce and replica ID.
    func proof(transcript: [UInt8], senderNonce: [UInt8], senderReplica: UInt64) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Self.proofMessage(transcript, senderNonce, senderReplica), using: SymmetricKey(data: secret)))
    }

    /// Whether `proof` is a correct proof by the peer (constant-time comparison).
    func verify(_ proof: [UInt8], transcript: [UInt8], senderNonce: [UInt8], senderReplica: UInt64) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(proof, authenticating: Self.proofMessage(transcript, senderNonce, senderReplica),
                                               using: SymmetricKey(data: secret))
    }

    /// What a side's identity key signs: the transcript and the signer's nonce.
    static func identityMessage(transcript: [UInt8], senderNonce: [UInt8]) -> [UInt8] {
        Array("\(label) identity".utf8) + transcript + senderNonce
    }

    private static func proofMessage(_ transcript: [UInt8], _ nonce: [UInt8], _ replica: UInt64) -> [UInt8] {
        Array("\(label) auth".utf8) + transcript + nonce + Array(String(replica).utf8)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
