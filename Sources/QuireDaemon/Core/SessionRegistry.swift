import ReplicatingTypes

/// The editor sessions of this daemon by id: registration, and what the core tells all of them.
/// Holds sessions only as `EditorEndpoint`s.
final class SessionRegistry: EditorNotifier {
    private(set) var sessions: [Int: any EditorEndpoint] = [:]
    private var nextID = 1

    /// The id the next session gets.
    func takeNextID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    func add(_ session: any EditorEndpoint) { sessions[session.id] = session }
    func remove(_ id: Int) { sessions[id] = nil }

    var inOrder: [any EditorEndpoint] { sessions.values.sorted { $0.id < $1.id } }

    func isOpen(_ document: SharedDocument) -> Bool {
        sessions.values.contains { $0.view(of: document.uri) != nil }
    }

    /// How many sessions show document `uri`.
    func openCount(of uri: String) -> Int {
        sessions.values.filter { $0.view(of: uri) != nil }.count
    }

    /// Elements the sessions may still refer to in document `uri` (views and undo histories).
    func referencedIDs(in uri: String) -> [ElementIDRange] {
        sessions.values.flatMap { $0.referencedIDs(in: uri) }
    }

    /// Shows `message` to every editor as an error.
    func showErrorToAll(_ message: String) {
        for session in inOrder { session.showError(message) }
    }

    /// Tells every editor that a peer joined, left or failed (`peer/changed`).
    func tellPeerChange(link: Int, event: String, user: String, address: String, reason: String?) {
        for session in inOrder { session.sendPeerChange(link: link, event: event, user: user, address: address, reason: reason) }
    }
}
