import JSON

/// `quire/status` (editor -> daemon, request, no params): what this daemon is doing, for a
/// person asking: this session, the sessions and documents, the peers (as `peer/status`) and
/// where documents are kept.
public struct StatusRequest: EditorRequest, Equatable {
    public static let method = "quire/status"

    public init(params: JSONValue?) throws(ResponseError) {}

    /// `{sessionId, replica, sessions, documents, peers, storage, summary}`.
    public struct Result: MessageResult {
        public var sessionID: Int
        public var replica: String
        public var sessions: Int
        public var documents: [ListDocumentsRequest.Entry]
        public var peers: PeerStatusRequest.Result
        /// Nil (`null` on the wire) when documents live in memory only.
        public var storage: Storage?
        /// What a status line says, counted by the daemon so that every client only words it
        /// (`{editors, documents, links, linksUp, notYetSent, removedKept, people}`), as the
        /// daemon's status records report it.
        public var summary: JSONValue

        public init(sessionID: Int, replica: String, sessions: Int, documents: [ListDocumentsRequest.Entry],
                    peers: PeerStatusRequest.Result, storage: Storage?, summary: JSONValue) {
            self.sessionID = sessionID
            self.replica = replica
            self.sessions = sessions
            self.documents = documents
            self.peers = peers
            self.storage = storage
            self.summary = summary
        }

        public var json: JSONValue {
            [
                "sessionId": .integer(Int64(sessionID)), "replica": .string(replica),
                "sessions": .integer(Int64(sessions)),
                "documents": .array(documents.map(\.json)),
                "peers": peers.json,
                "storage": storage?.json ?? .null,
                "summary": summary,
            ]
        }
    }

    /// Where documents are kept: `{dataDir, durability, failure}`; `failure` is null while the
    /// data directory works.
    public struct Storage: Sendable, Equatable {
        public var dataDir: String
        public var durability: String
        public var failure: String?

        public init(dataDir: String, durability: String, failure: String?) {
            self.dataDir = dataDir
            self.durability = durability
            self.failure = failure
        }

        public var json: JSONValue {
            ["dataDir": .string(dataDir), "durability": .string(durability), "failure": failure.map(JSONValue.string) ?? .null]
        }
    }
}
