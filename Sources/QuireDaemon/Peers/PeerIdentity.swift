import Crypto

/// A daemon's long-lived key towards peers: an Ed25519 key pair that signs each link's
/// handshake transcript, so a peer can pin it by its fingerprint.
///
/// Guarantees: the private key never leaves the process or the data directory (`identity`,
/// mode 0600); the fingerprint names the public key alone and is the same after every restart
/// of a daemon with a data directory. A daemon without one (`--ephemeral`) has a new key each run.
public struct PeerIdentity: Sendable {
    let privateKey: Curve25519.Signing.PrivateKey

    /// A new random identity.
    public init() {
        privateKey = Curve25519.Signing.PrivateKey()
    }

    /// The identity kept as its 32-byte private key.
    public init(rawRepresentation bytes: [UInt8]) throws {
        privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: bytes)
    }

    /// The 32 bytes to keep on disk.
    var rawRepresentation: [UInt8] { Array(privateKey.rawRepresentation) }

    public var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

    public var fingerprint: String { Self.fingerprint(ofPublicKey: publicKey) }

    /// Signs `message` (a handshake transcript and the signer's role).
    func signature(for message: [UInt8]) throws -> [UInt8] {
        Array(try privateKey.signature(for: message))
    }

    /// Whether `signature` is `publicKey`'s over `message`.
    static func isValid(_ signature: [UInt8], of message: [UInt8], by publicKey: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// The first 16 bytes of the public key's SHA-256, in hex, in groups of four:
    /// `3f1c-0a9e-...`, short enough to read out and compare.
    public static func fingerprint(ofPublicKey key: [UInt8]) -> String {
        let digest = Array(SHA256.hash(data: key)).prefix(16)
        let hex = Hex.encode(Array(digest))
        return stride(from: 0, to: hex.count, by: 4).map { start in
            String(hex.dropFirst(start).prefix(4))
        }.joined(separator: "-")
    }

    /// A fingerprint as a person may type it: case and separators do not matter.
    public static func normalized(_ fingerprint: String) -> String {
        String(fingerprint.lowercased().filter(\.isHexDigit))
    }
}
