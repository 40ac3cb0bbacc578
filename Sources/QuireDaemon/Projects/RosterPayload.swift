import QuireProject
import ReplicatingTypes

/// The roster's payloads on peer frame kind 12 (`project`), beside tree batches and
/// `ProjectFormats` (protocol/peer.md, *Project frames*; protocol/decisions/roles.md). Each starts
/// with a tag byte that is never a tree batch's version:
///
///     roster  := 0x52 founder(32) RosterChange.encode(changes)   the whole roster, or new changes
///     secret  := 0x53 length(1) secret(16..64)                   the member secret, owner to new member
///     refused := 0x58 length(varint, <= 300) reason(UTF-8)        why the link is refused, before the cut
///
/// Guarantees: decoding checks every bound before allocating (`RosterChange.decode` bounds the
/// count at `ProjectRoster.maximumChanges`); signatures are checked by `ProjectRoster.apply`,
/// before anything is kept.
enum RosterPayload: Equatable {
    case roster(founder: MemberKey, changes: [RosterChange])
    case memberSecret([UInt8])
    case refused(String)

    static let rosterTag: UInt8 = 0x52
    static let secretTag: UInt8 = 0x53
    static let refusedTag: UInt8 = 0x58
    static let maximumReasonBytes = 300

    /// Whether a kind-12 payload is one of these (by its first byte).
    static func isRosterPayload(_ payload: [UInt8]) -> Bool {
        guard let first = payload.first else { return false }
        return first == rosterTag || first == secretTag || first == refusedTag
    }

    var encoded: [UInt8] {
        var writer = BinaryWriter()
        switch self {
        case .roster(let founder, let changes):
            writer.write(Self.rosterTag)
            writer.write(contentsOf: founder.bytes)
            writer.write(contentsOf: RosterChange.encode(changes))
        case .memberSecret(let secret):
            writer.write(Self.secretTag)
            writer.write(UInt8(min(secret.count, 255)))
            writer.write(contentsOf: secret.prefix(255))
        case .refused(let reason):
            let bytes = Array(reason.utf8.prefix(Self.maximumReasonBytes))
            writer.write(Self.refusedTag)
            writer.writeVarint(UInt64(bytes.count))
            writer.write(contentsOf: bytes)
        }
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(BinaryDecodingError) -> RosterPayload {
        var reader = BinaryReader(bytes)
        switch try reader.readByte() {
        case rosterTag:
            guard let founder = MemberKey(Array(try reader.readBytes(MemberKey.byteCount))) else { throw .invalid("a roster's founder is not 32 bytes") }
            return .roster(founder: founder, changes: try RosterChange.decode(Array(try reader.readBytes(reader.remaining))))
        case secretTag:
            let length = Int(try reader.readByte())
            guard JoinLine.secretBytes.contains(length) else { throw .invalid("a member secret has \(JoinLine.secretBytes) bytes, got \(length)") }
            let secret = Array(try reader.readBytes(length))
            guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after the member secret") }
            return .memberSecret(secret)
        case refusedTag:
            let length = try reader.readCount(limit: maximumReasonBytes)
            let text = Array(try reader.readBytes(length))
            guard reader.isAtEnd else { throw .invalid("\(reader.remaining) bytes after a refusal's reason") }
            return .refused(String(decoding: text, as: UTF8.self))
        case let tag:
            throw .invalid("not a roster payload (tag \(tag))")
        }
    }
}
