import Logging
import QuireProtocol
import ReplicatingTypes

/// The daemon's state and the rules that tie sessions and documents together: documents by URI,
/// editor sessions by id, and the flow of operations from whoever made them to everyone else.
///
/// Threading: not thread-safe by design. One event loop owns a daemon and calls into it for
/// every connection, so messages are handled one at a time, in arrival order per connection.
public final class Daemon {
    /// Settings fixed at start-up.
    public struct Configuration: Sendable {
        /// Daemon edits carry a text hash only for documents up to this many scalars (hashing is O(n)).
        public var hashLimit: Int
        public var maximumFrameBytes: Int
        /// JSON nested deeper than this is a parse error.
        public var maximumNestingDepth: Int
        public var serverVersion: String

        public init(hashLimit: Int = 1 << 20, maximumFrameBytes: Int = 8 << 20, maximumNestingDepth: Int = 64, serverVersion: String = "0.2.0") {
            self.hashLimit = hashLimit
            self.maximumFrameBytes = maximumFrameBytes
            self.maximumNestingDepth = maximumNestingDepth
            self.serverVersion = serverVersion
        }
    }

    public let configuration: Configuration
    let logger: Logger
    private var nextReplica: () -> ReplicaID
    private(set) var documents: [String: SharedDocument] = [:]
    private(set) var sessions: [Int: EditorSession] = [:]
    private var nextSessionID = 1

    /// - Parameter replicaSource: draws the replica ID of each new editor session; inject a
    ///   counter in tests, a random source in the daemon.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "quire"),
                replicaSource: @escaping () -> ReplicaID = { ReplicaID(UInt64.random(in: 1...UInt64.max)) }) {
        self.configuration = configuration
        self.logger = logger
        self.nextReplica = replicaSource
    }

    /// A new editor session whose outgoing messages go to `send`.
    public func makeSession(send: @escaping (Message) -> Void) -> EditorSession {
        let session = EditorSession(id: nextSessionID, replica: nextReplica(), daemon: self, send: send)
        nextSessionID += 1
        sessions[session.id] = session
        logger.info("editor session \(session.id) started")
        return session
    }

    /// Forgets a session whose connection closed; its cursors disappear from other editors.
    public func endSession(_ session: EditorSession) {
        for uri in session.openDocuments { close(uri, in: session) }
        sessions[session.id] = nil
        logger.info("editor session \(session.id) ended")
    }

    // MARK: Documents

    func document(_ uri: String) -> SharedDocument? { documents[uri] }

    /// The document `uri`, created from `text` by `view`'s replica when new.
    func openDocument(_ uri: String, creatingWith makeText: () -> ReplicatingText) -> (SharedDocument, created: Bool) {
        if let existing = documents[uri] { return (existing, false) }
        let document = SharedDocument(uri: uri, text: makeText())
        documents[uri] = document
        logger.info("document \(uri) created with \(document.text.count) characters")
        return (document, true)
    }

    func close(_ uri: String, in session: EditorSession) {
        session.forgetView(uri)
        guard let document = documents[uri] else { return }
        if document.selections.removeValue(forKey: session.id) != nil {
            broadcastSelections(of: session, in: document)
        }
    }

    /// Operations `session` made in `document`: into the document, then queued for every other
    /// session that has it open. Sent at the next `flush()`.
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, from session: EditorSession) {
        guard !operations.isEmpty else { return }
        document.apply(operations)
        for other in sessions.values where other !== session {
            other.view(of: document.uri)?.enqueue(operations)
        }
    }

    /// Sends every session the daemon edits it is owed. Called after each incoming message
    /// (after its reply), so several remote operations become one edit.
    public func flush() {
        for session in sessions.values.sorted(by: { $0.id < $1.id }) { session.sendPendingEdits() }
    }

    // MARK: Selections

    func broadcastSelections(of session: EditorSession, in document: SharedDocument) {
        for other in sessions.values where other !== session {
            other.sendSelections(of: session.id, in: document)
        }
    }

    /// Every session's selections in `document`, for a session that just opened it.
    func sendAllSelections(in document: SharedDocument, to session: EditorSession) {
        for id in document.selections.keys.sorted() where id != session.id {
            session.sendSelections(of: id, in: document)
        }
    }

    // MARK: Status

    var documentList: [ListDocumentsRequest.Entry] {
        documents.values.sorted { $0.uri < $1.uri }.map { document in
            ListDocumentsRequest.Entry(uri: document.uri, lines: document.text.lineCount, characters: document.text.count,
                                       openInSessions: sessions.values.filter { $0.view(of: document.uri) != nil }.count)
        }
    }
}
