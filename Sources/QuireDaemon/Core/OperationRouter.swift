import Logging
import QuireProtocol
import ReplicatingTypes

/// The one path by which operations reach a document, its log, its editors and the peers:
/// every editor edit, every change from outside (a file, an undo) and every peer's operations
/// or whole state goes in here, and out to everyone but where it came from.
///
/// Guarantees: a local edit of a project's document where this daemon's role does not allow
/// writing is refused with `readOnly` before anything changes (`ProjectWriteRule`); a local
/// edit that would take a document past the elements a document may hold
/// (`ElementRoom`) is refused with `documentTooLarge` before anything changes, so every local
/// edit is held to the bound peers hold it to; a peer's operations go in only when new, so
/// chains and meshes converge without echoes. Operations go only on links that carry the
/// document (of its scope). Editors hear at the next end of a read.
/// May call: the store, the editors' views, the peer links, the view keeper, the document
/// registry (sharing records) and the stability rounds' state (an editor moved).
final class OperationRouter: OperationSink {
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let store: DocumentStore?
    private unowned let sessions: SessionRegistry
    private unowned let links: PeerLinks
    private unowned let views: ViewKeeper
    private unowned let registry: DocumentRegistry
    private let rounds: StabilityRounds
    private let writeRule: ProjectWriteRule

    init(configuration: DaemonConfiguration, logger: Logger, store: DocumentStore?, sessions: SessionRegistry, links: PeerLinks,
         views: ViewKeeper, registry: DocumentRegistry, rounds: StabilityRounds, writeRule: ProjectWriteRule) {
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.sessions = sessions
        self.links = links
        self.views = views
        self.registry = registry
        self.rounds = rounds
        self.writeRule = writeRule
    }

    /// The room local edits have in `document`.
    /// - Complexity: O(replicas of the document)
    func elementRoom(of document: SharedDocument) -> ElementRoom {
        ElementRoom(uri: document.uri, held: document.text.scalars.claimedElementCount, limit: configuration.maximumElementsPerDocument)
    }

    /// Throws `readOnly` when `document` belongs to a project where this daemon may not write
    /// (`ProjectWriteRule`), and `documentTooLarge` when the operations of a local edit would
    /// take it past the elements a document may hold.
    private func checkLocalEdit(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) throws(ResponseError) {
        if !operations.isEmpty, let readOnly = writeRule.ownReadOnly(document.uri) { throw readOnly.error(uri: document.uri) }
        try elementRoom(of: document).check(adding: ElementRoom.newElements(of: operations))
    }

    /// Operations `session` made in `document`: into the document, then queued for every other
    /// session that has it open. `editID` names the editor edit they make up: it is kept with
    /// them (`SharedDocument.appliedEditIDs`). `edit`: the view the editor made them in, and the
    /// epoch and daemon revision its edit was based on; logged with them, so recovery rebuilds
    /// the view (even for an edit with no operations). Throws `documentTooLarge`, changing
    /// nothing. Callers change nothing of their own (views, undo histories) before this returned.
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, from session: any EditorEndpoint,
                    editID: String?, edit: (view: EditorView, epoch: Int, revision: Int)?) throws(ResponseError) {
        try checkLocalEdit(operations, of: document)
        if let editID, !operations.isEmpty { document.appliedEditIDs.insert(editID) }
        if let edit {
            store?.append(.edited(view: edit.view.id, epoch: edit.epoch, revision: edit.revision), toDocument: document.id,
                          editID: editID, operations: operations)
        }
        distribute(operations, to: document, exceptSession: session, editID: editID, logged: edit != nil)
        rounds.editorsMoved = true   // an editor view may have caught up
    }

    /// Operations that came from outside every editor and peer (a file changed on disk, an
    /// undo): into the document, to every session that has it open, and to every peer. Throws
    /// `documentTooLarge`, changing nothing, as `contribute` does.
    func contributeFromOutside(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument) throws(ResponseError) {
        try checkLocalEdit(operations, of: document)
        distribute(operations, to: document)
    }

    /// Operations a peer sent: only those this daemon did not have go into the document, to the
    /// editors that have it open, and on to every other peer. Each is judged against the state
    /// the earlier ones of the batch left, so an insertion and the removal of what it inserted
    /// both go in and on.
    func contribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument, fromPeer origin: any PeerEndpoint) {
        record(document.applyNew(operations), of: document, exceptLink: origin)
    }

    /// Takes a whole state a peer sent as `document` (an empty copy no editor shows), keeps it
    /// (a snapshot at once: no log of operations can rebuild it) and passes it on to the other
    /// peers.
    func adopt(_ state: ReplicatingText, into document: SharedDocument, fromPeer origin: any PeerEndpoint) {
        document.adopt(state)
        views.detachDormantViews(of: document)
        registry.markShared(document, holder: origin.peerReplica)
        store?.adopt(document.text, forDocument: document.id)
        logger.info("document \(document.uri) taken whole from peer link \(origin.id): \(state.count) characters")
        for link in links.links.values where link !== origin && link.carries(document.uri) { link.sendWhole(document) }
    }

    /// Applies `operations` to `document`, logs them, and queues them for every session that has
    /// it open and every peer, but the ones they came from.
    private func distribute(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument,
                            exceptSession origin: (any EditorEndpoint)? = nil, editID: String? = nil, logged: Bool = false) {
        guard !operations.isEmpty else { return }
        document.apply(operations)
        record(operations, of: document, exceptSession: origin, editID: editID, logged: logged)
    }

    /// Logs operations already applied to `document` (unless `logged`: recorded with their view
    /// already) and queues them for every session that has it open and every peer, but the ones
    /// they came from.
    private func record(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument,
                        exceptSession origin: (any EditorEndpoint)? = nil, exceptLink originLink: (any PeerEndpoint)? = nil,
                        editID: String? = nil, logged: Bool = false) {
        guard !operations.isEmpty else { return }
        if !logged { store?.append(operations, toDocument: document.id, editID: editID) }
        for session in sessions.sessions.values where session !== origin { session.view(of: document.uri)?.enqueue(operations) }
        for link in links.links.values where link !== originLink && link.carries(document.uri) { link.sendOperations(operations, of: document) }
    }
}
