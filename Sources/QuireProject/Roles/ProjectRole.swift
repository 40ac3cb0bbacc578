/// What a person may do in a shared project (protocol/decisions/roles.md): `read` sees the text,
/// the cursors and can follow; `write` also edits; `owner` also changes who may do what.
///
/// Guarantee: ordered by what they allow, `read < write < owner`.
public enum ProjectRole: String, Sendable, Hashable, Comparable, CaseIterable {
    case read, write, owner

    /// The role's byte in `RosterChange`'s binary form (0 stands for "removed").
    var code: UInt8 {
        switch self {
        case .read: return 1
        case .write: return 2
        case .owner: return 3
        }
    }

    init?(code: UInt8) {
        switch code {
        case 1: self = .read
        case 2: self = .write
        case 3: self = .owner
        default: return nil
        }
    }

    public static func < (lhs: ProjectRole, rhs: ProjectRole) -> Bool { lhs.code < rhs.code }

    /// Whether this role may change the project's documents and tree.
    public var mayWrite: Bool { self >= .write }
}

/// A member of a project: the Ed25519 public key its daemon authenticates with on every link.
///
/// Guarantee: exactly 32 bytes; ordered bytewise (the order replays break ties by).
public struct MemberKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let byteCount = 32
    public let bytes: [UInt8]

    public init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public static func < (lhs: MemberKey, rhs: MemberKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    /// The first 8 bytes in hex, for logs (the daemon shows the full fingerprint to people).
    public var description: String {
        bytes.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
