/// Tells the parts that keep work per document (a project's disk pass) which documents changed,
/// as they change: so that a pass looks at the documents that changed since the last, not at
/// every document the daemon holds.
///
/// Guarantees: every listener hears of a document each time its `revision` moves (operations
/// applied, a state taken) and when the registry takes it in (`DocumentRegistry`), before the
/// change returns; nothing is kept here, so nothing grows.
final class DocumentChanges {
    private var listeners: [(SharedDocument) -> Void] = []

    /// Calls `listener` with every document that changes from now on.
    func listen(_ listener: @escaping (SharedDocument) -> Void) { listeners.append(listener) }

    /// `document` changed, or is new here.
    /// - Complexity: O(listeners).
    func changed(_ document: SharedDocument) {
        for listener in listeners { listener(document) }
    }
}
