/// Why a peer link could not be made.
public enum PeeringError: Error, CustomStringConvertible {
    case noSecret
    case weakSecret
    case tooManyHandshakes(Int)
    case tooManyHandshakesFrom(String, Int)

    public var description: String {
        switch self {
        case .noSecret: return "peering needs a shared secret: set QUIRE_SECRET or pass --secret-file"
        case .weakSecret: return "the peer secret is too short (fewer than \(PeerSecret.minimumMaterialBytes) bytes): run `quire secret` for one"
        case .tooManyHandshakes(let count): return "\(count) peer handshakes are already under way"
        case .tooManyHandshakesFrom(let host, let count): return "\(count) peer handshakes from \(host) are already under way"
        }
    }
}
