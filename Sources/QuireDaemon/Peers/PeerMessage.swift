import JSON
import QuireProtocol
import ReplicatingTypes

/// An authenticated peer frame as a typed value, decoded in one place (`decode`), where every
/// field and every bound is checked (protocol/peer.md, *Bounds*): names of documents, the size
/// of a list, version vectors, epochs, round IDs. The handshake's frames are the secure
/// channel's (`HandshakeMessage`); operations and states carry the CRDT's encoding, decoded and
/// bounded against the document they are for (`PeerBounds`).
enum PeerMessage {
    case documents(DocumentList)
    case operations(uri: String, documentID: UInt64, payload: [UInt8])
    case state(uri: String, documentID: UInt64, payload: [UInt8])
    case stability(StabilityMessage)
    case presence(PresenceMessage)
    case digest(DigestMessage)
    /// A shared project's tree operations (`ProjectTreeCoding`, opaque here), for project `key`.
    case project(key: String, payload: [UInt8])
    case heartbeat

    /// Why a frame is refused (the link is cut with this reason).
    struct Invalid: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    /// `frame` as a message; nil for the handshake's frames, which never reach the session.
    static func decode(_ frame: PeerFrame, limits: DaemonConfiguration) throws(Invalid) -> PeerMessage? {
        switch frame {
        case .documents(let json): return .documents(try DocumentList(json: json, limits: limits))
        case .operations(let uri, let id, let payload):
            if let violation = nameViolation(uri) { throw Invalid(description: violation) }
            return .operations(uri: uri, documentID: id, payload: payload)
        case .state(let uri, let id, let payload):
            if let violation = nameViolation(uri) { throw Invalid(description: violation) }
            return .state(uri: uri, documentID: id, payload: payload)
        case .stability(let json): return .stability(try StabilityMessage(json: json))
        case .presence(let json):
            if let violation = json["uri"]?.stringValue.flatMap(nameViolation) { throw Invalid(description: violation) }
            do { return .presence(try PresenceMessage(json: json)) } catch { throw Invalid(description: error.description) }
        case .digest(let json):
            if let violation = json["uri"]?.stringValue.flatMap(nameViolation) { throw Invalid(description: violation) }
            do { return .digest(try DigestMessage(json: json)) } catch { throw Invalid(description: error.description) }
        case .project(let key, let payload):
            guard key.utf8.count == DocumentScope.projectKeyDigits, key.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                throw Invalid(description: "a project frame whose key is not \(DocumentScope.projectKeyDigits) lowercase hex digits: \"\(DocumentName.displayed(key))\"")
            }
            return .project(key: key, payload: payload)
        case .heartbeat: return .heartbeat
        case .hello, .auth, .proof, .bye: return nil
        }
    }

    /// The documents the message names (each checked against the link's scope).
    var documentNames: [String] {
        switch self {
        case .documents(let list): return list.entries.map(\.uri)
        case .operations(let uri, _, _), .state(let uri, _, _): return [uri]
        case .stability(let message): return [message.uri]
        case .presence(let message): return [message.uri]
        case .digest(let message): return [message.uri]
        case .project, .heartbeat: return []
        }
    }

    /// Why `uri` from the peer is not a document name (said safely), or nil.
    static func nameViolation(_ uri: String) -> String? {
        DocumentName.problem(uri).map { "\($0): \"\(DocumentName.displayed(uri))\"" }
    }

    /// Whether `text` is a stability round's ID as daemons make them: `<replica>:<number>`, in
    /// decimal, at most 41 characters.
    static func isRoundID(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        return text.utf8.count <= 41 && parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }
    }
}

/// `documents`: the documents a daemon holds with their version vectors; the first list of a
/// link names every shared document (`initial`), later ones announce one.
/// Bounds: at most `maximumDocumentsPerList` entries; each a document name, a decimal ID, a
/// version vector of at most `maximumReplicasPerDocument` replicas with decimal IDs and counts
/// of at least 0, and at most as many epochs, each a round ID.
struct DocumentList {
    struct Entry {
        var uri: String
        var id: UInt64
        var version: [ReplicaID: UInt64]
        /// It will come as a state: no empty copy is made for it meanwhile.
        var whole: Bool
        /// The retiring rounds the sender's copy includes.
        var epochs: Set<String>
        /// The receiver must rebase onto the sender's state.
        var rebase: Bool
    }

    var initial: Bool
    var entries: [Entry]

    init(json: JSONValue, limits: DaemonConfiguration) throws(PeerMessage.Invalid) {
        guard let list = json["documents"]?.arrayValue else { throw .init(description: "malformed document list") }
        // The bounds of the whole list first: nothing of it is used when one entry breaks one.
        if list.count > limits.maximumDocumentsPerList {
            throw .init(description: "\(list.count) documents in one list exceed the limit of \(limits.maximumDocumentsPerList)")
        }
        for entry in list {
            if let uri = entry["uri"]?.stringValue, let violation = PeerMessage.nameViolation(uri) { throw .init(description: violation) }
            if let replicas = entry["version"]?.objectValue?.count, replicas > limits.maximumReplicasPerDocument {
                throw .init(description: "a version vector of \(replicas) replicas exceeds the limit of \(limits.maximumReplicasPerDocument)")
            }
            if let epochs = entry["epochs"]?.arrayValue {
                if epochs.count > limits.maximumReplicasPerDocument {
                    throw .init(description: "\(epochs.count) epochs of one document exceed the limit of \(limits.maximumReplicasPerDocument)")
                }
                if let bad = epochs.first(where: { !($0.stringValue.map(PeerMessage.isRoundID) ?? false) }) {
                    throw .init(description: "an epoch that is not a round ID: \"\(DocumentName.displayed(bad.stringValue ?? "(not a string)"))\"")
                }
            }
        }
        initial = json["initial"] == .bool(true)
        entries = []
        entries.reserveCapacity(list.count)
        for entry in list {
            guard let uri = entry["uri"]?.stringValue, !uri.isEmpty, let idText = entry["id"]?.stringValue, let id = UInt64(idText),
                  let version = entry["version"]?.objectValue else { throw .init(description: "malformed document list entry") }
            var counts: [ReplicaID: UInt64] = [:]
            for (key, value) in version {
                guard let replica = UInt64(key), let count = value.integerValue, count >= 0 else { throw .init(description: "malformed version vector") }
                counts[ReplicaID(replica)] = UInt64(count)
            }
            entries.append(Entry(uri: uri, id: id, version: counts, whole: entry["whole"] == .bool(true),
                                 epochs: Set((entry["epochs"]?.arrayValue ?? []).compactMap(\.stringValue)), rebase: entry["rebase"] == .bool(true)))
        }
    }
}

/// Decoding a `stability` frame's content, with its bounds.
extension StabilityMessage {
    init(json: JSONValue) throws(PeerMessage.Invalid) {
        if let round = json["round"]?.stringValue, !PeerMessage.isRoundID(round) {
            throw .init(description: "a stability round ID that is not <replica>:<number>: \"\(DocumentName.displayed(round))\"")
        }
        if let violation = json["uri"]?.stringValue.flatMap(PeerMessage.nameViolation) { throw .init(description: violation) }
        guard let uri = json["uri"]?.stringValue, let idText = json["id"]?.stringValue, let id = UInt64(idText),
              let round = json["round"]?.stringValue, let phase = json["phase"]?.stringValue.flatMap(Phase.init(rawValue:))
        else { throw .init(description: "malformed stability message") }
        self.uri = uri
        documentID = id
        self.round = round
        self.phase = phase
        ok = json["ok"] == .bool(true)
        reason = json["reason"]?.stringValue.map { DisplayText.clean($0, limit: DisplayText.maximumReasonLength) }
        reached = Self.replicas(in: json["reached"])
        holders = DocumentSharing.holderTimes(json["holders"])
        retire = Self.replicas(in: json["retire"])
        forget = json["forget"] == .bool(true)
    }

    /// The replica IDs in `json` (an array of decimal strings); entries that are not such are left out.
    private static func replicas(in json: JSONValue?) -> Set<ReplicaID> {
        Set((json?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(UInt64.init).map(ReplicaID.init) })
    }
}
