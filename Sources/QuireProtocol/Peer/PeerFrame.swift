import JSON

/// One message of the peer protocol (protocol/peer.md). On the wire: a 4-byte big-endian body
/// length, then the body: one kind byte and the payload. Control messages carry a small JSON
/// object; operations carry the document's name and the CRDT's compact binary encoding, which
/// this module treats as opaque bytes.
public enum PeerFrame: Equatable, Sendable {
    case hello(JSONValue)
    case auth(JSONValue)
    case documents(JSONValue)
    case operations(uri: String, documentID: UInt64, payload: [UInt8])
    case heartbeat
    case bye(reason: String)
    /// A document's whole state, for a peer that lacks it and cannot be sent operations (the
    /// sender dropped tombstones its history is anchored to).
    case state(uri: String, documentID: UInt64, payload: [UInt8])
    /// A stability round: which tombstones every copy has seen removed (protocol/peer.md).
    case stability(JSONValue)
    /// Where one editor's cursors and selections are in a document, with its user's name and
    /// colour, anchored to element IDs (protocol/peer.md, *Presence*).
    case presence(JSONValue)
    /// A digest of what a daemon holds of one document, or the answer that repairs a difference
    /// (protocol/peer.md, *Repair*).
    case digest(JSONValue)
    /// A side's proof that it knows the shared secret, bound to this link and nothing else (no
    /// name, replica or key): the first sealed frame each side sends (protocol/peer.md, *Handshake*).
    case proof(JSONValue)
    /// A shared project's tree operations (protocol/peer.md, *Projects*): the project's key (16
    /// lowercase hex digits) and the operations in `ProjectTreeCoding`, opaque to this module.
    case project(key: String, payload: [UInt8])

    enum Kind: UInt8 {
        case hello = 1, auth = 2, documents = 3, operations = 4, heartbeat = 5, bye = 6, state = 7, stability = 8, presence = 9, digest = 10, proof = 11
        case project = 12
    }

    /// The longest project key a `project` frame may carry (a key is 16 characters; the rest is
    /// refused where the frame is decoded, before anything of it is kept).
    public static let maximumProjectKeyBytes = 64

    /// Why a frame body is not a peer message.
    public struct DecodingError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The framed bytes: length, kind, payload.
    public func encoded() -> [UInt8] {
        Self.framed(body())
    }

    /// `body` with its 4-byte big-endian length in front.
    public static func framed(_ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        var bytes = [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        bytes.reserveCapacity(4 + body.count)
        bytes += body
        return bytes
    }

    /// The frame body: kind byte and payload (what a sealed link encrypts).
    public func body() -> [UInt8] {
        var body: [UInt8]
        switch self {
        case .hello(let v): body = [Kind.hello.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .auth(let v): body = [Kind.auth.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .documents(let v): body = [Kind.documents.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .stability(let v): body = [Kind.stability.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .presence(let v): body = [Kind.presence.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .digest(let v): body = [Kind.digest.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .proof(let v): body = [Kind.proof.rawValue] + JSONSerializer(sortedKeys: true).serialize(v)
        case .operations(let uri, let id, let payload): body = Self.documentBody(.operations, uri: uri, id: id, payload: payload)
        case .state(let uri, let id, let payload): body = Self.documentBody(.state, uri: uri, id: id, payload: payload)
        case .project(let key, let payload):
            let name = Array(key.utf8)
            body = [Kind.project.rawValue]
            body.reserveCapacity(1 + 2 + name.count + payload.count)
            Self.appendVarint(UInt64(name.count), to: &body)
            body += name
            body += payload
        case .heartbeat: body = [Kind.heartbeat.rawValue]
        case .bye(let reason): body = [Kind.bye.rawValue] + Array(reason.utf8)
        }
        return body
    }

    /// The frame's name, for logs and refusals.
    public var name: String {
        switch self {
        case .hello: return "hello"
        case .auth: return "auth"
        case .documents: return "a document list"
        case .operations: return "operations"
        case .heartbeat: return "a heartbeat"
        case .bye: return "bye"
        case .state: return "a document state"
        case .stability: return "a stability message"
        case .presence: return "presence"
        case .digest: return "a digest"
        case .proof: return "a proof"
        case .project: return "a project frame"
        }
    }

    /// Decodes one frame body (without its length prefix).
    public static func decode(_ body: [UInt8]) throws(DecodingError) -> PeerFrame {
        guard let first = body.first, let kind = Kind(rawValue: first) else {
            throw DecodingError(description: "unknown frame kind \(body.first.map(String.init) ?? "(empty frame)")")
        }
        let payload = Array(body.dropFirst())
        switch kind {
        case .hello: return .hello(try json(payload))
        case .auth: return .auth(try json(payload))
        case .documents: return .documents(try json(payload))
        case .stability: return .stability(try json(payload))
        case .presence: return .presence(try json(payload))
        case .digest: return .digest(try json(payload))
        case .proof: return .proof(try json(payload))
        case .heartbeat: return .heartbeat
        case .bye: return .bye(reason: String(decoding: payload, as: UTF8.self))
        case .operations:
            let (uri, id, rest) = try documentPayload(payload, frame: "operations")
            return .operations(uri: uri, documentID: id, payload: rest)
        case .state:
            let (uri, id, rest) = try documentPayload(payload, frame: "state")
            return .state(uri: uri, documentID: id, payload: rest)
        case .project:
            var index = 0
            guard let length = readVarint(payload, &index), length <= UInt64(maximumProjectKeyBytes), index + Int(length) <= payload.count else {
                throw DecodingError(description: "project frame with a malformed project key")
            }
            let keyBytes = payload[index..<(index + Int(length))]
            guard keyBytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw DecodingError(description: "project frame whose key is not printable ASCII")
            }
            return .project(key: String(decoding: keyBytes, as: UTF8.self), payload: Array(payload[(index + Int(length))...]))
        }
    }

    /// A frame about one document: kind, varint name length, UTF-8 name, 8-byte big-endian ID, payload.
    private static func documentBody(_ kind: Kind, uri: String, id: UInt64, payload: [UInt8]) -> [UInt8] {
        let name = Array(uri.utf8)
        var body = [kind.rawValue]
        body.reserveCapacity(1 + 4 + name.count + 8 + payload.count)
        appendVarint(UInt64(name.count), to: &body)
        body += name
        for shift in stride(from: 56, through: 0, by: -8) { body.append(UInt8(truncatingIfNeeded: id >> UInt64(shift))) }
        body += payload
        return body
    }

    private static func documentPayload(_ payload: [UInt8], frame: String) throws(DecodingError) -> (String, UInt64, [UInt8]) {
        var index = 0
        guard let length = readVarint(payload, &index), length <= 4096, index + Int(length) + 8 <= payload.count else {
            throw DecodingError(description: "\(frame) frame with a malformed document name")
        }
        guard let uri = String(validating: payload[index..<(index + Int(length))], as: UTF8.self) else {
            throw DecodingError(description: "document name is not UTF-8")
        }
        index += Int(length)
        var id: UInt64 = 0
        for byte in payload[index..<(index + 8)] { id = id << 8 | UInt64(byte) }
        index += 8
        return (uri, id, Array(payload[index...]))
    }

    private static func json(_ bytes: [UInt8]) throws(DecodingError) -> JSONValue {
        do {
            let value = try JSONParser(maximumDepth: 16).parse(bytes)
            guard case .object = value else { throw DecodingError(description: "control message is not a JSON object") }
            return value
        } catch let error as DecodingError {
            throw error
        } catch {
            throw DecodingError(description: "control message is not JSON: \(error)")
        }
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 { bytes.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }

    static func readVarint(_ bytes: [UInt8], _ index: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while index < bytes.count, shift < 64 {
            let byte = bytes[index]
            index += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
        return nil
    }
}

/// Cuts a peer byte stream into frame bodies: a 4-byte big-endian length, then that many bytes.
///
/// Guarantees: a length over `maximumFrameBytes` is an error before any of its body is
/// buffered; after an error the stream is not trusted again (the link is cut).
public struct PeerFramer: Sendable {
    /// Lowered during a handshake, raised once the peer is authenticated.
    public var maximumFrameBytes: Int
    private var buffer: [UInt8] = []
    public private(set) var failed = false

    public init(maximumFrameBytes: Int = 16 << 20) {
        self.maximumFrameBytes = maximumFrameBytes
    }

    public enum Event: Equatable, Sendable {
        case frame([UInt8])
        case tooLarge(Int)
    }

    public var bufferedByteCount: Int { buffer.count }

    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Event] {
        guard !failed else { return [] }
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        var start = 0
        while buffer.count - start >= 4 {
            let length = Int(buffer[start]) << 24 | Int(buffer[start + 1]) << 16 | Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            if length > maximumFrameBytes {
                failed = true
                buffer.removeAll()
                events.append(.tooLarge(length))
                return events
            }
            guard buffer.count - start - 4 >= length else { break }
            events.append(.frame(Array(buffer[(start + 4)..<(start + 4 + length)])))
            start += 4 + length
        }
        buffer.removeFirst(start)
        return events
    }
}
