import Crypto
import ReplicatingTypes

/// One change to a project's roster, as sent to peers: `author` (an owner, when it takes effect)
/// gives `subject` the role `role`, or removes it (`role == nil`), at Lamport counter `counter`.
/// Signed by the author's key over the project's key and every field, so a daemon that relays it
/// can neither forge nor alter it (protocol/decisions/roles.md).
///
/// Guarantees: `verify(projectKey:)` is true only for a change the author's private key signed
/// for that project; the binary form is bounded and checked before anything is allocated.
public struct RosterChange: Hashable, Sendable {
    public static let signatureBytes = 64
    /// Counters stay below this, so a hostile peer cannot exhaust the clock.
    public static let maximumCounter: UInt64 = 1 << 62

    public let subject: MemberKey
    public let role: ProjectRole?
    public let counter: UInt64
    public let author: MemberKey
    public let signature: [UInt8]

    /// A change signed now by `signer` (whose public key is the author).
    public static func signed(subject: MemberKey, role: ProjectRole?, counter: UInt64, projectKey: String,
                              signer: Curve25519.Signing.PrivateKey) throws -> RosterChange {
        guard let author = MemberKey(Array(signer.publicKey.rawRepresentation)) else { throw RosterRefusal.badKey }
        let message = signedBytes(subject: subject, role: role, counter: counter, author: author, projectKey: projectKey)
        let signature = Array(try signer.signature(for: message))
        return RosterChange(subject: subject, role: role, counter: counter, author: author, signature: signature)
    }

    init(subject: MemberKey, role: ProjectRole?, counter: UInt64, author: MemberKey, signature: [UInt8]) {
        self.subject = subject
        self.role = role
        self.counter = counter
        self.author = author
        self.signature = signature
    }

    /// Whether the author's key signed exactly this change for project `projectKey`.
    public func verify(projectKey: String) -> Bool {
        guard signature.count == Self.signatureBytes,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: author.bytes) else { return false }
        let message = Self.signedBytes(subject: subject, role: role, counter: counter, author: author, projectKey: projectKey)
        return key.isValidSignature(signature, for: message)
    }

    /// What is signed: a label, the project key, then the fields in their binary form.
    static func signedBytes(subject: MemberKey, role: ProjectRole?, counter: UInt64, author: MemberKey, projectKey: String) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(contentsOf: Array("quire roster 1\0".utf8))
        let key = Array(projectKey.utf8)
        writer.writeVarint(UInt64(key.count))
        writer.write(contentsOf: key)
        writer.write(contentsOf: subject.bytes)
        writer.write(role?.code ?? 0)
        writer.writeVarint(counter)
        writer.write(contentsOf: author.bytes)
        return writer.bytes
    }

    /// The order a roster replays its changes in: by counter, then author, subject and role, so
    /// every copy replays the same set in the same order.
    static func replayOrder(_ lhs: RosterChange, _ rhs: RosterChange) -> Bool {
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        if lhs.author != rhs.author { return lhs.author < rhs.author }
        if lhs.subject != rhs.subject { return lhs.subject < rhs.subject }
        if lhs.role?.code != rhs.role?.code { return (lhs.role?.code ?? 0) < (rhs.role?.code ?? 0) }
        return lhs.signature.lexicographicallyPrecedes(rhs.signature)
    }
}

/// Why a roster change is refused (nothing is changed).
public enum RosterRefusal: Error, Equatable, CustomStringConvertible {
    case badSignature
    case badKey
    case notAnOwner
    case lastOwner
    case tooManyChanges
    case tooManyMembers
    case clockExhausted

    public var description: String {
        switch self {
        case .badSignature: return "a roster change whose signature does not verify"
        case .badKey: return "a roster key that is not an Ed25519 public key"
        case .notAnOwner: return "only an owner of the project changes who may do what"
        case .lastOwner: return "the project would have no owner left"
        case .tooManyChanges: return "the roster holds \(ProjectRoster.maximumChanges) changes, the most it keeps"
        case .tooManyMembers: return "the roster names \(ProjectRoster.maximumMembers) keys, the most it keeps"
        case .clockExhausted: return "the roster's clock has run out"
        }
    }
}

/// The compact binary form of roster changes (the library's LEB128 varints):
///
///     batch  := version(1) count(varint) change*
///     change := subject(32) role(1: 0 removed, 1 read, 2 write, 3 owner) counter(varint) author(32) signature(64)
///
/// Decoding checks every bound before allocating; signatures are checked by `ProjectRoster.apply`.
extension RosterChange {
    public static let binaryVersion: UInt8 = 1

    public static func encode(_ changes: [RosterChange]) -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(binaryVersion)
        writer.writeVarint(UInt64(changes.count))
        for change in changes {
            writer.write(contentsOf: change.subject.bytes)
            writer.write(change.role?.code ?? 0)
            writer.writeVarint(change.counter)
            writer.write(contentsOf: change.author.bytes)
            writer.write(contentsOf: change.signature)
        }
        return writer.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> [RosterChange] {
        var reader = BinaryReader(bytes)
        let version = try reader.readByte()
        guard version == binaryVersion else { throw .unsupportedVersion(version) }
        let count = try reader.readCount(limit: ProjectRoster.maximumChanges)
        var changes: [RosterChange] = []
        changes.reserveCapacity(min(count, reader.remaining / 130))
        for _ in 0..<count {
            guard let subject = MemberKey(Array(try reader.readBytes(MemberKey.byteCount))) else { throw .invalid("a roster key is not 32 bytes") }
            let code = try reader.readByte()
            let role = ProjectRole(code: code)
            guard code == 0 || role != nil else { throw .invalid("a roster change's role is \(code); 0 to 3 expected") }
            let counter = try reader.readVarint()
            guard counter < maximumCounter else { throw .invalid("a roster change's counter is beyond 2^62") }
            guard let author = MemberKey(Array(try reader.readBytes(MemberKey.byteCount))) else { throw .invalid("a roster key is not 32 bytes") }
            let signature = Array(try reader.readBytes(signatureBytes))
            changes.append(RosterChange(subject: subject, role: role, counter: counter, author: author, signature: signature))
        }
        guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after the last roster change") }
        return changes
    }
}
