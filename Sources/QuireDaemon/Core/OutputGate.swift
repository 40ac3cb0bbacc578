import ReplicatingTypes

/// The one place where a read ends and output is released: nothing an editor or a peer is sent
/// leaves before the edits it depends on are durable.
///
/// Every write to an editor or a peer goes through `gated`; while the store has edits not yet on
/// stable storage (`.sync` durability) the bytes are held, in order. A read from an editor or a
/// peer ends with `endRead()`: the end-of-read steps run (daemon edits and presence go out,
/// rounds are looked at again), then what was logged is made durable and the held output is
/// released. A link closing, a session ending or an exit only release (`release()`).
/// May call: the store, the editors (a store failure is told to each once) and the steps and
/// snapshot source the composition root gives it.
final class OutputGate {
    private let store: DocumentStore?
    private unowned let sessions: SessionRegistry
    /// Output (replies, daemon edits, peer frames) waiting for the store's next commit.
    private var held: [(write: ([UInt8]) -> Void, bytes: [UInt8])] = []
    private var storeFailureReported = false
    /// What runs at the end of every read, before the commit (set by the composition root).
    var endOfReadSteps: () -> Void = {}
    /// The state a snapshot of document `id` keeps, with its views' states (set by the composition root).
    var snapshotSource: (UInt64) -> (text: ReplicatingText, views: [[UInt8]])? = { _ in nil }
    /// What else a store failure stops, before the editors are told (set by the composition root).
    var onStoreFailure: (DocumentStore) -> Void = { _ in }

    init(store: DocumentStore?, sessions: SessionRegistry) {
        self.store = store
        self.sessions = sessions
    }

    /// `write`, held back while the store has edits not yet on stable storage (`.sync`
    /// durability), so that no editor or peer hears of an edit a crash could still take back.
    /// Held bytes go out in their original order at the next release.
    func gated(_ write: @escaping ([UInt8]) -> Void) -> ([UInt8]) -> Void {
        { [unowned self] bytes in
            if self.held.isEmpty && !(self.store?.holdsOutput ?? false) {
                write(bytes)
            } else {
                self.held.append((write, bytes))
            }
        }
    }

    /// The end of a read from an editor or a peer: the end-of-read steps, then `release()`.
    func endRead() {
        endOfReadSteps()
        release()
    }

    /// Under `.sync` durability makes everything logged so far durable; then sends the output
    /// that waited for it and folds long logs into snapshots.
    func release() {
        guard let store else { return }
        if store.durability == .sync { store.commit() }
        finishCommit(store)
    }

    /// Makes everything logged so far durable whatever the durability (the `.batch` timer and
    /// shutdown call it), then releases.
    func syncStorage() {
        guard let store else { return }
        store.commit()
        finishCommit(store)
    }

    /// Sends the output that waited for the commit, folds long logs into snapshots, and tells
    /// editors once if the store failed.
    private func finishCommit(_ store: DocumentStore) {
        let output = held
        held = []
        for (write, bytes) in output { write(bytes) }
        store.snapshotDueDocuments(withViews: snapshotSource)
        if let failure = store.failure, !storeFailureReported {
            storeFailureReported = true
            onStoreFailure(store)
            sessions.showErrorToAll("Quire \(failure)")
        }
    }
}
