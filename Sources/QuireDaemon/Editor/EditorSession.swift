import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// One editor attached to the daemon: the LSP-style lifecycle, the negotiated position
/// encoding, the user shown to others, and a view per open document.
///
/// Messages are decoded by the type `MessageRegistry` lists for their method and handled by
/// that type's `SessionRequest` / `SessionNotification` conformance (in `Handlers/`, one file
/// per concern); this file holds the session's state and the dispatch.
///
/// Guarantees: requests before `initialize` get -32002 and change nothing; after `shutdown`
/// only `exit` is accepted; every request gets exactly one reply (the processor sends it);
/// a failed request changes no document.
public final class EditorSession: MessageHandler {
    public enum State: Sendable { case uninitialized, running, shutDown }

    public let id: Int
    unowned let daemon: any EditorHost
    let send: (Message) -> Void
    public internal(set) var state = State.uninitialized
    var encoding = PositionEncoding.utf16
    var user = WireUser(name: "anonymous")
    /// This session's view of each document it has open; set through `show(_:)`.
    private(set) var views: [String: EditorView] = [:]
    /// The documents whose view holds operations the editor was not sent yet (`sendPendingEdits`).
    let unsentViews = UnsentViews()
    /// This session's own edits per document, for `document/undo` and `document/redo`.
    var histories: [String: UndoHistory] = [:]
    /// Cursor updates this session has sent, in every document: orders its cursors by recency.
    var cursorUpdates: UInt64 = 0
    /// Called with the exit status when the editor sends `exit`.
    public var onExit: ((Int32) -> Void)?

    /// Edits are made as replicas the daemon lends per document and copy (`LocalReplicas`):
    /// a view's own while it is open, another for edits made on a copy of the document itself.
    init(id: Int, daemon: any EditorHost, send: @escaping (Message) -> Void) {
        self.id = id
        self.daemon = daemon
        self.send = send
    }

    var openDocuments: [String] { views.keys.sorted() }
    func view(of uri: String) -> EditorView? { views[uri] }
    /// Elements this session may still refer to in document `uri` (its view and its undo
    /// history): removed ones among them must stay stored.
    func referencedIDs(in uri: String) -> [ElementIDRange] {
        (views[uri]?.referencedIDs ?? []) + (histories[uri]?.referencedIDs ?? [])
    }

    /// Shows `view` of document `uri` in this session from now on: its operations not yet sent
    /// go out at the end of each read (`sendPendingEdits`).
    func show(_ view: EditorView, as uri: String) {
        views[uri]?.report(unsentTo: nil, as: uri)
        view.report(unsentTo: unsentViews, as: uri)
        views[uri] = view
        daemon.projects.editorViewsChanged(uri)
    }

    func forgetView(_ uri: String) {
        views[uri]?.report(unsentTo: nil, as: uri)
        views[uri] = nil
        histories[uri] = nil
        daemon.projects.editorViewsChanged(uri)
    }

    var logger: Logger { daemon.logger }

    /// Sends the editor a notification of the daemon's.
    func notify(_ notification: some DaemonNotification) {
        send(notification.message)
    }

    // MARK: MessageHandler

    public func handleRequest(id: RequestID, method: String, params: JSONValue?) -> Result<JSONValue, ResponseError> {
        do {
            return .success(try answer(method: method, params: params))
        } catch {
            logger.notice("session \(self.id): \(ResponseError.shownMethod(method)) (id \(id)) failed: \(error.message)")
            return .failure(error)
        }
    }

    public func handleNotification(method: String, params: JSONValue?) {
        do {
            try handle(notification: method, params: params)
        } catch {
            logger.warning("session \(id): dropped notification \(ResponseError.shownMethod(method)): \(error.message)")
        }
    }

    public func handleResponse(id: RequestID, result: Result<JSONValue, ResponseError>) {
        logger.debug("session \(self.id): ignored a response to request \(id): the daemon sends no requests")
    }

    public func dropped(_ reason: String) {
        logger.warning("session \(id): \(reason)")
    }

    // MARK: Dispatch

    /// The reply to request `method`: the lifecycle decides whether it may be asked now, the
    /// registry which type it is, and that type's conformance what it does.
    private func answer(method: String, params: JSONValue?) throws(ResponseError) -> JSONValue {
        switch state {
        case .uninitialized where method != InitializeRequest.method:
            throw .serverNotInitialized
        case .running where method == InitializeRequest.method:
            throw .invalidRequest("initialize was already sent")
        case .shutDown:
            throw .invalidRequest("the session is shut down: only exit is accepted")
        default: break
        }
        guard let type = MessageRegistry.request(method) as? any SessionRequest.Type else {
            // A notification sent with an id gets no reply of its own: say so, not just "not found".
            if MessageRegistry.notification(method) != nil {
                throw ResponseError(code: ResponseError.methodNotFoundCode,
                                    message: "Method not found: \(ResponseError.shownMethod(method)) is a notification, send it without an id")
            }
            throw .methodNotFound(method)
        }
        return try type.answer(params: params, in: self)
    }

    /// Handles notification `method`: `exit` and `$/cancelRequest` in any state, the others
    /// while running.
    private func handle(notification method: String, params: JSONValue?) throws(ResponseError) {
        let type = MessageRegistry.notification(method) as? any SessionNotification.Type
        if let type, type.acceptedInAnyState { return try type.handle(params: params, in: self) }
        guard state == .running else {
            throw .invalidRequest(state == .uninitialized ? "not initialized" : "shut down")
        }
        guard let type else {
            if MessageRegistry.request(method) != nil {
                throw ResponseError(code: ResponseError.methodNotFoundCode,
                                    message: "Method not found: \(ResponseError.shownMethod(method)) is a request, send it with an id to be answered")
            }
            throw .methodNotFound(method)
        }
        try type.handle(params: params, in: self)
    }

    // MARK: Shared by the handlers

    func openView(_ uri: String) throws(ResponseError) -> EditorView {
        guard let view = views[uri] else { throw .unknownDocument(uri) }
        return view
    }

    /// This session's view of `uri` and the document itself; unknown unless this session has
    /// it open.
    func openViewAndDocument(_ uri: String) throws(ResponseError) -> (EditorView, SharedDocument) {
        guard let view = views[uri], let document = daemon.document(uri) else { throw .unknownDocument(uri) }
        return (view, document)
    }
}
