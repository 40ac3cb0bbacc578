// Editor/: one editor's session (requests, views, undo history; `EditorSession`). May call: the
// core through `EditorHost` only, Documents, Storage's view events, QuireProtocol and
// ReplicatingTypes; never the `Daemon`, Peers or Transport. (The folder note; the session's
// state is in EditorSession.swift, its handlers in Handlers/.)

/// An editor session is what the core reaches an editor through (`EditorEndpoint`).
extension EditorSession: EditorEndpoint {
    var isRunning: Bool { state == .running }
}
