import ReplicatingTypes

/// Editor views beyond their sessions: the views kept for their editors' return
/// (`DormantViews`), their detaching when their elements go, new views' durable names, and the
/// log of what happens to a view. May call: the store.
final class ViewKeeper {
    /// Editor views no session shows now, which their editors may reopen (after a restart, every
    /// view the log holds).
    let dormantViews = DormantViews()
    private let store: DocumentStore?
    private let randomBytes: (Int) -> [UInt8]

    init(store: DocumentStore?, randomBytes: @escaping (Int) -> [UInt8]) {
        self.store = store
        self.randomBytes = randomBytes
    }

    /// A new view's durable name: random, so a returning editor cannot take another's view by guessing.
    func makeViewID() -> String {
        Hex.encode(randomBytes(12))
    }

    /// Logs what happened to an editor's view of `document`.
    func log(_ event: ViewEvent, of document: SharedDocument) {
        store?.append(event, toDocument: document.id)
    }

    /// Keeps `view` of `document` for its editor's return. A kept view pushed out by newer ones
    /// keeps its texts (detached): its editor's reopen still merges as text, with nothing asked.
    func keepDormant(_ view: EditorView, of document: SharedDocument) {
        for evicted in dormantViews.keep(view, of: document.id) { detach(evicted, of: document) }
    }

    /// Keeps only the texts of the kept views of `document` that `shouldGo` picks (every one by
    /// default): their elements are going, and their editors' reopens merge as text against
    /// what they showed (`DetachedView`).
    func detachDormantViews(of document: SharedDocument, where shouldGo: (EditorView) -> Bool = { _ in true }) {
        for view in dormantViews.removeAll(of: document.id, where: shouldGo) { detach(view, of: document) }
    }

    /// `view` (no longer kept whole) as its texts; the oldest detached views beyond the limit go.
    private func detach(_ view: EditorView, of document: SharedDocument) {
        log(.detached(view: view.id), of: document)
        for gone in dormantViews.keepDetached(DetachedView(detaching: view), of: document.id) {
            log(.closed(view: gone.id), of: document)
        }
    }
}
