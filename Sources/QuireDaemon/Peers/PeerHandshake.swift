import Crypto

/// The cryptography of a peer link's handshake (peer protocol 5, `protocol/decisions/peer-security.md`):
/// an ephemeral X25519 key exchange whose keys also depend on the shared secret, a transcript
/// hash of both hellos that every later proof is bound to, and the proofs themselves.
///
/// Guarantees:
/// 1. Without the secret no one derives the frame keys or the proofs, so a wrong secret shows as
///    the first sealed frame (the connector's proof) failing to open.
/// 2. Each side's proof (an HMAC under a key derived from the X25519 result and the secret) and
///    signature (its identity key) cover the transcript, which holds both ephemeral keys, both
///    nonces and both roles: a proof made on one link does not verify on another, so it can be
///    neither replayed, reflected nor relayed; and only someone who holds one of the two
///    ephemeral private keys can test a guess of the secret against it (a passive listener cannot).
/// 3. The two directions use different keys (each derived with its sender's nonce), so a frame
///    cannot be reflected back to its sender either.
/// 4. A side that holds several secrets (an accepting daemon with project secrets,
///    protocol/decisions/project-sharing.md) derives, from the same key exchange, an opener per
///    secret; only the one of the connector's secret opens and verifies its proof (`Exchange`).
struct PeerHandshake {
    static let label = "quire-peer-5"

    private let secrets: [[UInt8]]
    let ourNonce: [UInt8]
    private let ephemeral = Curve25519.KeyAgreement.PrivateKey()

    /// `secrets`: the secrets this side may speak with (a connector: the one it dials with).
    init(secrets: [[UInt8]], nonce: [UInt8]) {
        self.secrets = secrets
        ourNonce = nonce
    }

    var ourKey: [UInt8] { Array(ephemeral.publicKey.rawRepresentation) }

    /// What both sides learn from the two hellos.
    struct Agreement {
        /// Hash of both hello bodies, in a canonical order: what proofs are bound to.
        var transcript: [UInt8]
        var sealer: FrameSealer
        var opener: FrameOpener
        /// The key of the proof this side sends, and of the one the peer must send.
        fileprivate var ourProofKey: SymmetricKey
        fileprivate var theirProofKey: SymmetricKey

        /// This side's proof of the secret on this link: HMAC-SHA256 of the transcript under a key
        /// derived from the X25519 result and the secret. It names nothing (no replica, no key).
        var ourProof: [UInt8] { Array(HMAC<SHA256>.authenticationCode(for: Agreement.proofMessage(transcript), using: ourProofKey)) }

        /// Whether `proof` is the peer's correct proof for this link (constant-time comparison).
        func verifyTheirs(_ proof: [UInt8]) -> Bool {
            HMAC<SHA256>.isValidAuthenticationCode(proof, authenticating: Agreement.proofMessage(transcript), using: theirProofKey)
        }

        private static func proofMessage(_ transcript: [UInt8]) -> [UInt8] { Array("\(PeerHandshake.label) proof".utf8) + transcript }
    }

    /// Why a hello cannot start a session.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What the hellos settle before a secret is chosen: the X25519 result and the transcript.
    /// An agreement per secret follows from it (`agreement(at:)`); an accepting side that holds
    /// several secrets first derives only each one's opener of the peer's frames (`opener(at:)`),
    /// one key derivation per secret, and the whole agreement of the one that opens the proof.
    struct Exchange {
        fileprivate let shared: [UInt8]
        let transcript: [UInt8]
        fileprivate let ourNonce: [UInt8]
        fileprivate let theirNonce: [UInt8]
        fileprivate let secrets: [[UInt8]]

        /// How many secrets this side may speak with.
        var secretCount: Int { secrets.count }

        private func key(_ purpose: String, sentBy nonce: [UInt8], secret: [UInt8]) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: shared + secret), salt: transcript,
                                   info: Array("\(PeerHandshake.label) \(purpose) ".utf8) + nonce, outputByteCount: 32)
        }

        /// The session keyed by secret `index` (of the secrets the handshake was made with).
        func agreement(at index: Int) -> Agreement {
            let secret = secrets[index]
            return Agreement(transcript: transcript, sealer: FrameSealer(key: key("frames", sentBy: ourNonce, secret: secret)),
                             opener: opener(at: index),
                             ourProofKey: key("proof", sentBy: ourNonce, secret: secret), theirProofKey: key("proof", sentBy: theirNonce, secret: secret))
        }

        /// The opener of the peer's frames were it to speak with secret `index`.
        func opener(at index: Int) -> FrameOpener {
            FrameOpener(key: key("frames", sentBy: theirNonce, secret: secrets[index]))
        }
    }

    /// Derives what the hellos settle from our hello body, theirs, and their nonce and ephemeral key.
    func agree(ourHello: [UInt8], theirHello: [UInt8], theirNonce: [UInt8], theirKey: [UInt8]) throws(Failure) -> Exchange {
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
        return Exchange(shared: shared, transcript: Array(hash.finalize()), ourNonce: ourNonce, theirNonce: theirNonce, secrets: secrets)
    }

    /// What a side's identity key signs: the transcript and the signer's nonce.
    static func identityMessage(transcript: [UInt8], senderNonce: [UInt8]) -> [UInt8] {
        Array("\(label) identity".utf8) + transcript + senderNonce
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }
}
