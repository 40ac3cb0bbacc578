import JSON

/// `peer/status` (editor -> daemon, request, no params): this daemon's identity, the ports it
/// listens on, its links and the documents peers hold (`protocol/README.md`, *Peers*).
public struct PeerStatusRequest: EditorRequest, Equatable {
    public static let method = "peer/status"

    public init(params: JSONValue?) throws(ResponseError) {}

    /// `{replica, fingerprint, listening, links, documents}`.
    public struct Result: MessageResult {
        public var replica: String
        public var fingerprint: String
        public var listening: [Int]
        public var links: [Link]
        /// One entry per document a peer ever held (`peer.md`, *Dropping tombstones*), as the
        /// daemon's sharing records report them.
        public var documents: JSONValue

        public init(replica: String, fingerprint: String, listening: [Int], links: [Link], documents: JSONValue) {
            self.replica = replica
            self.fingerprint = fingerprint
            self.listening = listening
            self.links = links
            self.documents = documents
        }

        public var json: JSONValue {
            [
                "replica": .string(replica), "fingerprint": .string(fingerprint),
                "listening": .array(listening.map { .integer(Int64($0)) }),
                "links": .array(links.map(\.json)),
                "documents": documents,
            ]
        }
    }

    /// One peer link. `encrypted` once the hellos were exchanged; `fingerprint` the peer's key
    /// once it authenticated; `pinned` whether a fingerprint was required; `behind` the elements
    /// this daemon has that the peer is not known to have; `scope` the documents it carries
    /// (`"general"` or `"project <key>"`), null until known (an incoming link's handshake);
    /// `role` the peer's role in that project (`read`, `write`, `owner`), absent for the general
    /// scope, before the peer proved its key, and for a key the project's roster does not name.
    public struct Link: Sendable, Equatable {
        public var link: Int
        public var state: String
        public var user: String
        public var address: String
        public var bytesIn: Int
        public var bytesOut: Int
        public var operationsIn: Int
        public var operationsOut: Int
        public var behind: Int
        public var encrypted: Bool
        public var fingerprint: String?
        public var pinned: Bool
        public var scope: String?
        public var role: String?

        public init(link: Int, state: String, user: String, address: String, bytesIn: Int, bytesOut: Int, operationsIn: Int,
                    operationsOut: Int, behind: Int, encrypted: Bool, fingerprint: String?, pinned: Bool, scope: String? = nil,
                    role: String? = nil) {
            self.link = link
            self.state = state
            self.user = user
            self.address = address
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.operationsIn = operationsIn
            self.operationsOut = operationsOut
            self.behind = behind
            self.encrypted = encrypted
            self.fingerprint = fingerprint
            self.pinned = pinned
            self.scope = scope
            self.role = role
        }

        public var json: JSONValue {
            var members: [String: JSONValue] = [
                "link": .integer(Int64(link)), "state": .string(state), "user": .string(user),
                "address": .string(address), "bytesIn": .integer(Int64(bytesIn)), "bytesOut": .integer(Int64(bytesOut)),
                "operationsIn": .integer(Int64(operationsIn)), "operationsOut": .integer(Int64(operationsOut)),
                "behind": .integer(Int64(behind)),
                "encrypted": .bool(encrypted), "fingerprint": fingerprint.map(JSONValue.string) ?? .null,
                "pinned": .bool(pinned), "scope": scope.map(JSONValue.string) ?? .null,
            ]
            if let role { members["role"] = .string(role) }
            return .object(members)
        }
    }
}
