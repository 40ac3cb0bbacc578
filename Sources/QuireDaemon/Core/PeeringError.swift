/// Why a peer link could not be made, or a secret not held.
public enum PeeringError: Error, CustomStringConvertible {
    case noSecret
    case weakSecret
    case tooManyHandshakes(Int)
    case tooManyHandshakesFrom(String, Int)
    /// Past the handshake rate (`HandshakeRate`): of one address, or of all (per second, burst).
    case handshakeRateFrom(String, Double, Double)
    case handshakeRate(Double, Double)
    /// No secret of this scope is held (a project neither shared nor joined here).
    case noSecretOf(DocumentScope)
    /// A project secret given for a key it does not derive.
    case secretNotOfScope(DocumentScope)
    /// More project secrets than a daemon holds at once.
    case tooManySecrets(Int)

    public var description: String {
        switch self {
        case .noSecret: return "peering needs a shared secret: set QUIRE_SECRET or pass --secret-file"
        case .weakSecret: return "the peer secret is too short (fewer than \(PeerSecret.minimumMaterialBytes) bytes): run `quire secret` for one"
        case .tooManyHandshakes(let count): return "\(count) peer handshakes are already under way"
        case .tooManyHandshakesFrom(let host, let count): return "\(count) peer handshakes from \(host) are already under way"
        case .handshakeRateFrom(let host, let rate, let burst):
            return "more peer handshakes from \(host) than the \(Self.number(rate)) a second (bursts of \(Self.number(burst))) this daemon takes from one address"
        case .handshakeRate(let rate, let burst):
            return "more peer handshakes than the \(Self.number(rate)) a second (bursts of \(Self.number(burst))) this daemon takes from addresses no peer authenticated from"
        case .noSecretOf(let scope): return "no secret of \(scope) is held here (share or join the project first)"
        case .secretNotOfScope(let scope): return "the secret given for \(scope) is not that project's secret (its key differs)"
        case .tooManySecrets(let limit): return "this daemon already holds \(limit) project secrets, the most it holds at once"
        }
    }

    /// A refusal for the handshake rate (logged at most once per interval, never per attempt).
    var isRateRefusal: Bool {
        switch self {
        case .handshakeRateFrom, .handshakeRate: return true
        default: return false
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
