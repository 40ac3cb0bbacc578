import Crypto
import QuireProject

/// The secret a group of daemons shares, as people handle it: `quire secret` makes one, and a
/// daemon takes only secrets of that form (`protocol/decisions/peer-security.md`, *Secrets*).
///
/// Form: `quire-` and 56 base32 characters (`a-z`, `2-7`, case ignored) holding 30 random bytes
/// from the system's generator (240 bits) and 5 bytes of their SHA-256. The check bytes make a
/// secret someone chose or typed (a passphrase, a word, a short string) fail at once, with an
/// error that says to run `quire secret`, instead of weakening every link: whoever takes part
/// in a handshake can test guesses of the secret offline, which only a secret nobody chose
/// makes harmless.
///
/// Guarantees: `generate()` never returns a secret `material(from:)` refuses; the material of an
/// accepted secret is its 30 random bytes, whatever the case it was written in.
public enum PeerSecret {
    public static let prefix = "quire-"
    static let randomByteCount = 30
    static let checkByteCount = 5
    /// Fewer bytes of key material than this are refused wherever a daemon is configured.
    public static let minimumMaterialBytes = 16

    /// Why a secret is refused.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// A new secret of 240 random bits.
    public static func generate() -> String {
        let random = SymmetricKey(size: SymmetricKeySize(bitCount: randomByteCount * 8)).withUnsafeBytes { Array($0) }
        return prefix + Base32.encode(random + check(random))
    }

    /// A name for the secret `material` that reveals nothing of it (16 hex digits of its SHA-256
    /// under a label): which secret made a link, without handing the secret around.
    static func tag(of material: [UInt8]) -> String {
        Hex.encode(Array(SHA256.hash(data: Array("quire secret tag\0".utf8) + material).prefix(8)))
    }

    /// The key material of `text` (surrounding spaces and line ends ignored), or why it is refused.
    /// `source` names where it came from in the error ("QUIRE_SECRET", "the secret file F").
    public static func material(from text: String, source: String = "the secret") throws(Refusal) -> [UInt8] {
        let trimmed = String(text.unicodeScalars.filter { !$0.properties.isWhitespace }).lowercased()
        let advice = "run `quire secret` and give its output to every daemon you pair (in QUIRE_SECRET or a --secret-file of mode 0600)"
        guard trimmed.hasPrefix(prefix), let bytes = Base32.decode(String(trimmed.dropFirst(prefix.count))),
              bytes.count == randomByteCount + checkByteCount else {
            let what = text.count < 40 ? "is too short to be" : "is not"
            throw Refusal(description: "\(source) \(what) a secret made by `quire secret`: a secret people choose can be guessed offline "
                + "by anyone who takes part in one handshake; \(advice)")
        }
        let random = Array(bytes.prefix(randomByteCount))
        guard Array(bytes.suffix(checkByteCount)) == check(random) else {
            throw Refusal(description: "\(source) has a typing error (its check characters do not match); copy it again, or \(advice)")
        }
        return random
    }

    private static func check(_ random: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("quire secret".utf8) + random).prefix(checkByteCount))
    }
}
