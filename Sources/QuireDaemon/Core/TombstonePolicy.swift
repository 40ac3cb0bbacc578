import Logging
import ReplicatingTypes

/// What on this daemon may still refer to a document's elements (editor views, undo histories,
/// kept views, the file base, selections), and dropping the removed characters nothing refers
/// to (protocol/decisions/tombstones.md). May call: the editors and the view keeper.
final class TombstonePolicy {
    private let logger: Logger
    private unowned let sessions: SessionRegistry
    private unowned let views: ViewKeeper

    init(logger: Logger, sessions: SessionRegistry, views: ViewKeeper) {
        self.logger = logger
        self.sessions = sessions
        self.views = views
    }

    /// What on this daemon may still refer to elements of `document`: editor views, undo
    /// histories, the file base and selections. Removed ones among them stay stored.
    func localReferences(of document: SharedDocument) -> [ElementIDRange] {
        var keep = document.selectionAnchors
        keep += sessions.referencedIDs(in: document.uri)
        keep += views.dormantViews.referencedIDs(of: document.id)
        if let base = document.file?.base { keep += base.scalars.visibleIDs }
        return keep
    }

    /// Drops the tombstones of `document` that no copy on this daemon can still refer to: not
    /// shown by an editor's view (whose next edit may be anchored to them), not in an undo
    /// history, not the base of its file, not under a selection.
    func dropTombstones(of document: SharedDocument) {
        let dropped = document.dropTombstones(keeping: localReferences(of: document))
        if dropped > 0 {
            logger.info("document \(document.uri): dropped \(dropped) removed characters no copy refers to any more")
        }
    }
}

/// What a snapshot of a document keeps: its state (a document no peer ever held first drops the
/// tombstones nothing here refers to; a shared one starts a stability round, whose success drops
/// them from the next) and the states of every editor view of it, live, kept or detached.
/// May call: the documents, the editors, the view keeper, the tombstone policy and the rounds.
final class SnapshotSource {
    private let logger: Logger
    private unowned let documents: DocumentRegistry
    private unowned let sessions: SessionRegistry
    private unowned let views: ViewKeeper
    private unowned let tombstones: TombstonePolicy
    private unowned let rounds: StabilityService

    init(logger: Logger, documents: DocumentRegistry, sessions: SessionRegistry, views: ViewKeeper, tombstones: TombstonePolicy,
         rounds: StabilityService) {
        self.logger = logger
        self.documents = documents
        self.sessions = sessions
        self.views = views
        self.tombstones = tombstones
        self.rounds = rounds
    }

    /// The state a snapshot of document `id` keeps, with its views' encoded states.
    func snapshot(ofDocument id: UInt64) -> (text: ReplicatingText, views: [[UInt8]])? {
        guard let document = documents.documents.values.first(where: { $0.id == id }) else { return nil }
        if document.everShared {
            // Tombstones go once a round shows every holder has seen them removed; the next
            // snapshot leaves them out.
            rounds.startRound(document)
        } else {
            tombstones.dropTombstones(of: document)
        }
        let live = sessions.inOrder.compactMap { $0.view(of: document.uri) } + views.dormantViews.views(of: id)
        let states = live.map { $0.encodedState() } + views.dormantViews.detachedViews(of: id).map { $0.encodedState() }
        #if DEBUG
        // What recovery will read must read back: a view that does not is an editor whose reopen fails.
        let check = ViewRecovery(uri: document.uri, replica: ReplicaID(0))
        check.restore(states, document: document.text)
        if check.damaged > 0 { logger.error("document \(document.uri): a view state written to its snapshot does not read back: \(check.damage ?? "")") }
        #endif
        return (document.text, states)
    }
}
