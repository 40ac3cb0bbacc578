/// Tells the parts that keep work per document (a project's disk pass) which documents changed,
/// as they change: so that a pass looks at the documents that changed since the last, not at
/// every document the daemon holds.
///
/// Guarantees: every listener hears of a document each time its `revision` moves (operations
/// applied, a state taken) and when the registry takes it in (`DocumentRegistry`), before the
/// change returns; nothing is kept here, so nothing grows.
final class DocumentChanges {
    private var listeners: [(SharedDocument) -> Void] = []
    private var compactionListeners: [(SharedDocument) -> Void] = []

    /// Calls `listener` with every document that changes from now on.
    func listen(_ listener: @escaping (SharedDocument) -> Void) { listeners.append(listener) }

    /// Calls `listener` with every document that dropped tombstones from now on (its text is
    /// the same; what it stores shrank: `ScopeUsage`).
    func listenToCompaction(_ listener: @escaping (SharedDocument) -> Void) { compactionListeners.append(listener) }

    /// `document` dropped tombstones. - Complexity: O(listeners).
    func compacted(_ document: SharedDocument) {
        for listener in compactionListeners { listener(document) }
    }

    /// `document` changed, or is new here.
    /// - Complexity: O(listeners).
    func changed(_ document: SharedDocument) {
        for listener in listeners { listener(document) }
    }
}
