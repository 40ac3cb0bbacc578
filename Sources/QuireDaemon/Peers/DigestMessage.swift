import JSON
import ReplicatingTypes

/// The content of a `digest` peer frame (protocol/peer.md, *Repair*): one step of comparing what
/// two daemons hold of one document and exchanging what differs.
///
/// - `ask`: "this is my digest, taken after I had received `received` operations and state frames
///   from you".
/// - `answer`: the other's digest, in reply to an `ask`; with `version` when it found a real
///   difference: "send me what I lack, and your version so I send you what you lack".
/// - `want`: "send me what I lack": a version vector, in reply to an answer that carried one.
///
/// Guarantees: decoding accepts only well-formed messages within bounds (a name of 1 to 4,096
/// bytes, a decimal 64-bit ID and count, a digest of exactly 32 hex digits, a version vector of
/// at most `maximumReplicas` entries with non-zero decimal replica IDs and counts in 0...2^62),
/// and each phase only with the fields it needs; anything else is `Invalid` and cuts the link.
struct DigestMessage: Equatable {
    enum Phase: String { case ask, answer, want }

    /// Entries a version vector may have (an array holds at most this many replicas).
    static let maximumReplicas = 1 << 16

    var phase: Phase
    var uri: String
    var documentID: UInt64
    /// Absent in `want`.
    var digest: DocumentDigest?
    /// Operations and state frames the sender had received on the link when it took its digest;
    /// absent in `want`.
    var received: UInt64?
    /// In `want`, and in an `answer` that found a difference.
    var version: VersionVector?

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    init(phase: Phase, uri: String, documentID: UInt64, digest: DocumentDigest? = nil, received: UInt64? = nil, version: VersionVector? = nil) {
        self.phase = phase
        self.uri = uri
        self.documentID = documentID
        self.digest = digest
        self.received = received
        self.version = version
    }

    var json: JSONValue {
        var object: [String: JSONValue] = ["phase": .string(phase.rawValue), "uri": .string(uri), "id": .string(String(documentID))]
        if let digest { object["digest"] = .string(digest.hex) }
        if let received { object["received"] = .string(String(received)) }
        if let version {
            var counts: [String: JSONValue] = [:]
            for (replica, count) in version.counts { counts[String(replica.rawValue)] = .integer(Int64(clamping: count)) }
            object["version"] = .object(counts)
        }
        return .object(object)
    }

    init(json: JSONValue) throws(Invalid) {
        guard let phase = json["phase"]?.stringValue.flatMap(Phase.init(rawValue:)),
              let uri = json["uri"]?.stringValue, !uri.isEmpty, uri.utf8.count <= 4096,
              let id = json["id"]?.stringValue.flatMap({ UInt64($0) }) else { throw Invalid(description: "malformed digest") }
        self.init(phase: phase, uri: uri, documentID: id)
        if phase != .want {
            guard let digest = json["digest"]?.stringValue.flatMap({ DocumentDigest(hex: $0) }),
                  let received = json["received"]?.stringValue.flatMap({ UInt64($0) }) else {
                throw Invalid(description: "malformed digest \(phase.rawValue)")
            }
            self.digest = digest
            self.received = received
        }
        if let version = json["version"] {
            guard phase != .ask else { throw Invalid(description: "a digest ask with a version vector") }
            self.version = try Self.versionVector(version)
        } else if phase == .want {
            throw Invalid(description: "a digest want without a version vector")
        }
    }

    private static func versionVector(_ json: JSONValue) throws(Invalid) -> VersionVector {
        guard let object = json.objectValue else { throw Invalid(description: "malformed version vector in a digest") }
        guard object.count <= maximumReplicas else {
            throw Invalid(description: "a version vector of \(object.count) replicas exceeds the limit of \(maximumReplicas)")
        }
        var counts: [ReplicaID: UInt64] = [:]
        for (key, value) in object {
            guard let replica = UInt64(key), replica != 0, let count = value.integerValue, count >= 0, count <= 1 << 62 else {
                throw Invalid(description: "malformed version vector in a digest")
            }
            counts[ReplicaID(replica)] = UInt64(count)
        }
        return VersionVector(counts)
    }
}
