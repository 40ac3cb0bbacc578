import Crypto

/// The value two daemons name to a relay so that it pairs their connections
/// (`protocol/relay.md`, *Rendezvous*): derived from the peer secret, so daemons that share a
/// secret meet, and revealing nothing of it.
///
/// `HKDF-SHA256(ikm: the secret's key material, salt: "quire-relay-rendezvous-1", info:
/// "rendezvous", 32 bytes)`. HKDF is one-way, and this label is used for nothing else, so the value
/// gives no key of the peer handshake (those also depend on each link's X25519 result) and no
/// test of a guess of the secret that is not already a search of 2^240 values.
///
/// This is the one place the value is computed; the relay dialer and anything that prints a
/// join line call it.
public enum RelayRendezvous {
    static let label = "quire-relay-rendezvous-1"
    /// Length of the value, in bytes (within `RelayWire.rendezvousLengths`).
    public static let byteCount = 32

    /// The rendezvous value of the secret whose key material is `secret` (`PeerSecret.material`).
    public static func value(secret: [UInt8]) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array(label.utf8),
                               info: Array("rendezvous".utf8), outputByteCount: byteCount).withUnsafeBytes { Array($0) }
    }
}
