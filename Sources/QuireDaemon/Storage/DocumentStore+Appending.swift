import ReplicatingTypes

/// What is logged of a document after it was made: its operations, its editors' view events,
/// its file binding, who holds it, a peer's whole state; and the snapshots that fold long logs
/// (`DocumentStore`).
extension DocumentStore {
    /// Logs operations applied to document `id`; `editID` names the editor edit they make up.
    public func append(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], toDocument id: UInt64, editID: String? = nil) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("log edits of \(documentFiles.uri)") {
            try documentFiles.append(operations, editID: editID)
            try afterAppend(documentFiles)
        }
    }

    /// Logs what happened to an editor's view of document `id` (an edit's operations with it).
    func append(_ event: ViewEvent, toDocument id: UInt64, editID: String? = nil,
                operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("log an editor view of \(documentFiles.uri)") {
            try documentFiles.append(event, editID: editID, operations: operations)
            try afterAppend(documentFiles)
        }
    }

    /// Records document `id`'s file binding (nil: none), as a record of its log
    /// (`DocumentFiles+Records`): durable as an edit is, and a document still in its pack stays
    /// there. `baseIsText`: the binding's base is the document's text as logged so far, which
    /// the record then does not copy.
    func record(_ binding: FileBinding?, forDocument id: UInt64, baseIsText: Bool = false) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("record the file binding of \(documentFiles.uri)") {
            try documentFiles.writeBinding(binding, baseIsText: baseIsText)
            try afterAppend(documentFiles)
        }
    }

    func afterAppend(_ documentFiles: DocumentFiles) throws {
        maker.noteActivity()
        grown.insert(documentFiles.id)
        guard !documentFiles.isUnmade else { return }   // in its pack, which the commit syncs
        unsynced.insert(documentFiles.id)
        if let index = openOrder.lastIndex(of: documentFiles.id) { openOrder.remove(at: index) }
        openOrder.append(documentFiles.id)
        while openOrder.count > Self.maximumOpenSegments {
            // Closed unsynced (it stays in `unsynced`): the commit reopens it to sync it, so a
            // read that writes to many documents pays no sync until its commit.
            let oldest = openOrder.removeFirst()
            files[oldest]?.closeUnsynced()
        }
    }

    /// Documents whose log segment holds an open descriptor now.
    var openSegmentCount: Int { files.values.filter(\.isOpen).count }

    /// Records who holds document `id` and where its copies stand, as a record of its log
    /// (`DocumentFiles+Records`): a project's documents shared or joined at once are not each
    /// given a file (nor taken out of their pack) on the reply path.
    func recordSharing(_ sharing: DocumentSharing, forDocument id: UInt64) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("record who holds \(documentFiles.uri)") {
            try documentFiles.recordSharing(sharing)
            try afterAppend(documentFiles)
        }
    }

    /// Takes `text`, a whole state a peer sent (not operations), as document `id` from here on:
    /// a state record in its log (`DocumentFiles+Records`), durable as an edit is; a document
    /// still in its pack stays there. A later snapshot folds it in as any other record.
    func adopt(_ text: ReplicatingText, forDocument id: UInt64) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("store the state of \(documentFiles.uri)") {
            try documentFiles.adopt(text)
            try afterAppend(documentFiles)
        }
    }

    /// Snapshots every document whose log has grown enough; `text(id)` gives its current state.
    public func snapshotDueDocuments(text: (UInt64) -> ReplicatingText?) {
        snapshotDueDocuments(withViews: { id in text(id).map { ($0, []) } })
    }

    /// `snapshotDueDocuments(text:)`, where `text(id)` also gives the states of the document's
    /// editor views, which the snapshot keeps.
    func snapshotDueDocuments(withViews text: (UInt64) -> (text: ReplicatingText, views: [[UInt8]])?) {
        guard failure == nil, !grown.isEmpty else { return }
        let candidates = grown
        grown = []
        for id in candidates.sorted() {
            guard let documentFiles = files[id], documentFiles.isSnapshotDue, let current = text(id),
                  settledFiles(id) != nil else { continue }
            attempt("snapshot \(documentFiles.uri)") { try documentFiles.writeSnapshot(of: current.text, views: current.views) }
        }
    }
}
