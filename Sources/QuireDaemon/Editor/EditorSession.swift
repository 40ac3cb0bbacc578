import JSON
import Logging
import QuireProtocol
import ReplicatingTypes

/// One editor attached to the daemon: the LSP-style lifecycle, the negotiated position
/// encoding, the user shown to others, and a view per open document.
///
/// Guarantees: requests before `initialize` get -32002 and change nothing; after `shutdown`
/// only `exit` is accepted; every request gets exactly one reply (the processor sends it);
/// a failed request changes no document.
public final class EditorSession: MessageHandler {
    public enum State: Sendable { case uninitialized, running, shutDown }

    public let id: Int
    let replica: ReplicaID
    private unowned let daemon: any EditorHost
    private let send: (Message) -> Void
    public private(set) var state = State.uninitialized
    private(set) var encoding = PositionEncoding.utf16
    private(set) var user = WireUser(name: "anonymous")
    private var views: [String: EditorView] = [:]
    /// This session's own edits per document, for `document/undo` and `document/redo`.
    private var histories: [String: UndoHistory] = [:]
    /// The replica undo and redo edit as (made on copies of the document, never on a view).
    private lazy var undoReplica = daemon.makeReplica()
    /// Called with the exit status when the editor sends `exit`.
    public var onExit: ((Int32) -> Void)?

    init(id: Int, replica: ReplicaID, daemon: any EditorHost, send: @escaping (Message) -> Void) {
        self.id = id
        self.replica = replica
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

    func forgetView(_ uri: String) {
        views[uri] = nil
        histories[uri] = nil
    }

    private var logger: Logger { daemon.logger }

    // MARK: MessageHandler

    public func handleRequest(id: RequestID, method: String, params: JSONValue?) -> Result<JSONValue, ResponseError> {
        do {
            return .success(try answer(method: method, params: params))
        } catch {
            logger.notice("session \(self.id): \(method) (id \(id)) failed: \(error.message)")
            return .failure(error)
        }
    }

    public func handleNotification(method: String, params: JSONValue?) {
        do {
            try handle(notification: method, params: params)
        } catch {
            logger.warning("session \(id): dropped notification \(method): \(error.message)")
        }
    }

    public func handleResponse(id: RequestID, result: Result<JSONValue, ResponseError>) {
        logger.debug("session \(self.id): ignored a response to request \(id): the daemon sends no requests")
    }

    public func dropped(_ reason: String) {
        logger.warning("session \(id): \(reason)")
    }

    // MARK: Requests

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
        switch method {
        case InitializeRequest.method: return try initialize(InitializeRequest(params: params))
        case LifecycleMethod.shutdown:
            state = .shutDown
            return .null
        case OpenDocumentRequest.method: return try open(named(OpenDocumentRequest(params: params)))
        case DocumentRequest.closeMethod:
            let request = try DocumentRequest(params: params)
            let view = try openView(request.uri)
            if request.keepView, let document = daemon.document(request.uri) {
                // A rebind: the view is kept for the reopen that follows, and so is the undo history.
                let history = histories[request.uri]
                daemon.keepDormant(view, of: document)
                daemon.close(request.uri, in: self, forGood: false)
                histories[request.uri] = history
            } else {
                daemon.close(request.uri, in: self)
            }
            return .null
        case DocumentRequest.textMethod:
            let request = try DocumentRequest(params: params)
            let view = try openView(request.uri)
            let text = view.sent.string
            return DocumentRequest.TextResult(uri: request.uri, text: text, epoch: view.epoch, hash: TextHash.sha256Hex(text)).json
        case DocumentRequest.resyncMethod:
            let request = try DocumentRequest(params: params)
            let (view, document) = try openViewAndDocument(request.uri)
            if let editorText = request.text, let epoch = request.epoch, let revision = request.revision {
                // Keep what the editor shows: its changes from what it was sent go in first.
                guard epoch == view.epoch else { throw .staleEpoch(got: epoch, current: view.epoch) }
                guard let shown = view.text(atRevision: revision) else {
                    throw .invalidParams("params.revision: \(revision) is not a revision this editor can be at (\(view.confirmedRevision) to \(view.sentRevision))")
                }
                try resolveResynced(document, shown: shown, editorText: editorText)
            } else if let editorText = request.text, let base = request.base {
                // The fallback: its changes since `base` go in before the resync.
                try mergeResynced(document, view: view, base: base, editorText: editorText)
            }
            view.resync(to: document.text)
            daemon.log(.resynced(view: view.id), of: document)
            let text = document.text.string
            logger.info("session \(id): \(request.uri) resynced, epoch \(view.epoch)")
            return DocumentRequest.TextResult(uri: request.uri, text: text, epoch: view.epoch, hash: TextHash.sha256Hex(text)).json
        case DocumentRequest.undoMethod, DocumentRequest.redoMethod:
            let request = try DocumentRequest(params: params)
            let (_, document) = try openViewAndDocument(request.uri)
            var text = document.text
            text.replica = undoReplica
            // On a copy of the history: a step the document has no room for stays where it is.
            var history = histories[request.uri, default: UndoHistory()]
            let operations = method == DocumentRequest.undoMethod ? history.undo(in: &text) : history.redo(in: &text)
            try daemon.contributeFromOutside(operations, to: document)
            histories[request.uri] = history
            return ["uri": .string(request.uri), "done": .bool(!operations.isEmpty)]
        case MergeDocumentRequest.method:
            let request = try MergeDocumentRequest(params: params)
            let (_, document) = try openViewAndDocument(request.uri)
            guard let source = daemon.document(request.from) else { throw .unknownDocument(request.from) }
            var scratch = document.text
            scratch.replica = replica
            let copied = source.text.string
            let end = scratch.count
            let endsInBreak = end == 0 || scratch.scalars.elements(in: (end - 1)..<end) == ["\n"]
            let separator = !endsInBreak && !copied.isEmpty ? "\n" : ""
            let operations = scratch.replace(end..<end, with: Array((separator + copied).unicodeScalars))
            try contributeStep(operations, to: document, fromOutside: true)
            logger.info("session \(id): merged \(request.from) into \(request.uri) (\(copied.unicodeScalars.count) characters)")
            return ["uri": .string(request.uri), "merged": .integer(Int64(copied.unicodeScalars.count))]
        case SaveDocumentRequest.method:
            let request = try SaveDocumentRequest(params: params)
            let (_, document) = try openViewAndDocument(request.uri)
            let saved = try daemon.save(document)
            return SaveDocumentRequest.result(uri: request.uri, path: saved.path, hash: saved.hash, imported: saved.imported)
        case ListDocumentsRequest.method:
            return .array(daemon.documentList.map(\.json))
        case EditDocumentMessage.method:
            let revision = try edit(EditDocumentMessage(params: params))
            return EditDocumentMessage.acknowledgement(editorRevision: revision)
        case MessageRegistry.statusMethod:
            return status()
        case PeerRequests.statusMethod:
            return peerStatus()
        case PeerRequests.listenMethod:
            let request = try PeerRequests.Listen(params: params)
            let transport = try peerTransport()
            do {
                return ["port": .integer(Int64(try transport.listen(host: request.host, port: request.port)))]
            } catch {
                throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot listen on \(request.host):\(request.port): \(error)")
            }
        case PeerRequests.stopListeningMethod:
            let port = try PeerRequests.port(params)
            return ["stopped": .bool(try peerTransport().stopListening(port: port))]
        case PeerRequests.connectMethod:
            let request = try PeerRequests.Connect(params: params)
            let fingerprint = try PeerRequests.fingerprint(params)
            let transport = try peerTransport()
            do {
                switch request {
                case .tcp(let host, let port): try transport.connect(host: host, port: port, fingerprint: fingerprint)
                case .command(let command): try transport.connect(command: command, fingerprint: fingerprint)
                }
            } catch {
                throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot connect: \(error)")
            }
            return .null
        case PeerRequests.disconnectMethod:
            let id = try PeerRequests.link(params)
            guard let link = daemon.links[id] else { throw .invalidParams("params.link: no peer link \(id)") }
            link.close("disconnected by an editor")
            return .null
        default:
            throw .methodNotFound(method)
        }
    }

    private func handle(notification method: String, params: JSONValue?) throws(ResponseError) {
        switch method {
        case LifecycleMethod.exit:
            let status: Int32 = state == .shutDown ? 0 : 1
            logger.info("session \(id): exit with status \(status)")
            daemon.commit()
            onExit?(status)
            return
        case LifecycleMethod.cancelRequest:
            _ = try CancelRequestNotification(params: params)
            return
        default: break
        }
        guard state == .running else {
            throw .invalidRequest(state == .uninitialized ? "not initialized" : "shut down")
        }
        switch method {
        case LifecycleMethod.initialized: return
        case EditDocumentMessage.method:
            let message = try EditDocumentMessage(params: params)
            do {
                _ = try edit(message)
            } catch {
                // Nobody can be told through a reply: say it in a notification the editor can show.
                send(.notification(method: "window/showMessage", params: [
                    "type": 1, "message": .string("Quire rejected an edit of \(message.uri): \(error.message). Resync the document."),
                ]))
                throw error
            }
        case CursorMessage.method:
            try updateSelections(CursorMessage(params: params))
        case SavedDocumentNotification.method:
            let message = try SavedDocumentNotification(params: params)
            let (view, document) = try openViewAndDocument(message.uri)
            guard message.epoch == view.epoch else { throw .staleEpoch(got: message.epoch, current: view.epoch) }
            guard let text = view.text(atRevision: message.revision) else {
                throw .invalidParams("params.revision: \(message.revision) is not a revision this editor can be at")
            }
            daemon.editorSaved(document, text: text)
        default:
            throw .methodNotFound(method)
        }
    }

    // MARK: Behaviour

    private func initialize(_ request: InitializeRequest) throws(ResponseError) -> JSONValue {
        if let version = request.protocolVersion, version != MessageRegistry.protocolVersion {
            throw .invalidParams("params.protocolVersion: \(version) is not supported; this daemon speaks version \(MessageRegistry.protocolVersion)")
        }
        let offered = request.positionEncodings.compactMap(PositionEncoding.init(rawValue:))
        encoding = offered.first ?? .utf16
        if let user = request.user, !PeerLink.displayName(user.name).isEmpty {
            self.user = user
            daemon.editorNamed(user.name)
        } else {
            // No name of its own: the daemon's (`--user-name`, git's user.name, $USER, the login).
            self.user = WireUser(name: PeerLink.displayName(daemon.configuration.userName), color: request.user?.color)
        }
        state = .running
        logger.info("session \(id): initialized by \(request.clientName ?? "an unnamed client") for \(user.name), positions in \(encoding.rawValue)")
        return InitializeRequest.Result(
            protocolVersion: MessageRegistry.protocolVersion, serverVersion: daemon.configuration.serverVersion,
            positionEncoding: encoding.rawValue, sessionID: id, replica: replica.description, user: user
        ).json
    }

    /// `request` with its document named, when the editor left that to the daemon.
    private func named(_ request: OpenDocumentRequest) throws(ResponseError) -> OpenDocumentRequest {
        guard request.leavesNamingToDaemon, let file = request.file else { return request }
        var named = request
        named.uri = ProjectNaming.documentName(ofFile: file)
        if let problem = DocumentName.problem(named.uri) { throw .invalidParams("params.file: names no document: \(problem)") }
        return named
    }

    private func open(_ request: OpenDocumentRequest) throws(ResponseError) -> JSONValue {
        guard views[request.uri] == nil else { throw .documentAlreadyOpen(request.uri) }
        let editorText = request.text ?? ""
        // Read before anything changes: a file that cannot be read refuses the open.
        let fileContent = try request.file.map { file throws(ResponseError) in try Daemon.readFile(file) }
        if let existing = daemon.document(request.uri) {
            try checkOpenKeepsText(of: existing, request: request, editorText: editorText)
        }
        let (document, created) = try daemon.openDocument(request.uri) { ReplicatingText(editorText, replica: replica) }
        var view: EditorView?
        if !created {
            if let viewID = request.view, let kept = daemon.dormantViews.take(viewID, of: document.id) {
                view = try resume(kept, of: document, request: request, editorText: editorText, fileContent: fileContent ?? nil)
            } else if let viewID = request.view, let detached = daemon.dormantViews.takeDetached(viewID, of: document.id) {
                try resume(detached, of: document, request: request, editorText: editorText, fileContent: fileContent ?? nil)
            } else if let base = request.base {
                try mergeReopened(document, base: applyingAcknowledged(request.pending, of: document, to: base), editorText: editorText)
            } else {
                try mergeOpened(document, request: request, editorText: editorText, fileContent: fileContent ?? nil)
            }
        }
        if let file = request.file, let content = fileContent {
            // A reopen whose editor wrote the file itself: its changes came in with the reopen.
            // Compared as text: the file's line endings, BOM and final newline are its format.
            let writtenByEditor = (request.base != nil || view != nil)
                && content.flatMap(FileFormat.decode).map { FileFormat.comparable($0.text, to: editorText) == editorText } == true
            try daemon.bind(document, toFile: file, content: content, writtenByEditor: writtenByEditor)
        } else if document.file != nil {
            do { try daemon.mergeOutsideChanges(of: document) } catch { showError("Quire: \(error.message)") }
        }
        let opened: EditorView
        if let view {
            view.resync(to: document.text)
            daemon.log(.resynced(view: view.id), of: document)
            opened = view
        } else {
            opened = EditorView(id: daemon.makeViewID(), uri: request.uri, text: document.text, replica: replica, encoding: encoding)
            daemon.log(.opened(view: opened.id), of: document)
        }
        views[request.uri] = opened
        // Tell the editor how to get from what it shows to the document's text.
        let target = document.text.string
        let changes = created || target == editorText ? [] : Self.changes(from: editorText, to: target, in: encoding)
        daemon.sendAllSelections(in: document, to: self)
        logger.info("session \(id): opened \(request.uri) (\(created ? "created" : view != nil ? "its view resumed" : "joined"), \(document.text.count) characters)")
        return OpenDocumentRequest.Result(uri: request.uri, epoch: opened.epoch, created: created, changes: changes,
                                          hash: TextHash.sha256Hex(target), view: opened.id).json
    }

    /// Throws, changing nothing, when opening `document` with `editorText` would replace text the
    /// editor shows with no way to keep it: the editor shows other text than the document, has no
    /// view or base to say what it changed, the document has edits, no bound file gives a base,
    /// and the editor did not say what the person chose (`conflict`).
    private func checkOpenKeepsText(of document: SharedDocument, request: OpenDocumentRequest, editorText: String) throws(ResponseError) {
        guard request.base == nil, request.conflict == nil, Self.holdsText(editorText),
              !(document.isPristine && !document.everShared) else { return }
        // A kept view gives the editor's text a base only in the epoch the editor is at: a
        // view that moved on (a reopen or resync whose reply was lost) does not.
        if let viewID = request.view,
           daemon.dormantViews.views(of: document.id).contains(where: { $0.id == viewID && $0.epoch == request.epoch })
            || daemon.dormantViews.detachedViews(of: document.id).contains(where: { $0.id == viewID && $0.text(epoch: request.epoch, revision: request.revision) != nil }) {
            return
        }
        if let file = request.file, let binding = document.file, binding.path == file { return }
        let current = document.text.string
        guard current != editorText else { return }
        throw .documentDiffers(uri: request.uri, characters: document.text.count)
    }

    /// An open with no view or base of a document that exists: nothing the editor shows is lost.
    /// A document never edited takes the editor's text; a document bound to the same file merges
    /// what the editor changed from the file's last synced text; otherwise the person chose
    /// (`conflict`): `take` the shared text, or `merge` (the editor's text is added after it).
    /// `fileContent`: the bound file as it is now, which the binding merges in itself, so only
    /// what the editor shows beyond it is the editor's. Throws `documentTooLarge`, changing
    /// nothing, when the document has no room for the editor's text.
    private func mergeOpened(_ document: SharedDocument, request: OpenDocumentRequest, editorText: String,
                             fileContent: [UInt8]?) throws(ResponseError) {
        let current = document.text.string
        guard Self.holdsText(editorText), editorText != current else { return }
        if document.isPristine && !document.everShared {
            try contributeAppended(editorText, to: document, separated: false)
        } else if let file = request.file, let binding = document.file, binding.path == file {
            // What the editor changed beyond the file (which the binding brings in once), or
            // beyond the file's last synced text when the file cannot be read.
            let base = fileContent.flatMap(FileFormat.decode).map { FileFormat.comparable($0.text, to: editorText) } ?? binding.base.string
            try mergeReopened(document, base: base, editorText: editorText)
        } else if request.conflict == .merge {
            try contributeAppended(editorText, to: document, separated: true)
        }
    }

    /// Whether an editor showing `text` shows something to keep: more than white space (an empty
    /// buffer is one empty line to Vim).
    static func holdsText(_ text: String) -> Bool {
        text.unicodeScalars.contains { !$0.properties.isWhitespace }
    }

    /// Adds `addition` at the end of `document` as this session's edit (one undo step), after a
    /// line break when `separated` and the document does not end in one. Throws
    /// `documentTooLarge`, changing nothing, when the document has no room for it.
    private func contributeAppended(_ addition: String, to document: SharedDocument, separated: Bool) throws(ResponseError) {
        var scratch = document.text
        scratch.replica = replica
        let end = scratch.count
        let endsInBreak = end == 0 || scratch.scalars.elements(in: (end - 1)..<end) == ["\n"]
        let separator = separated && !endsInBreak ? "\n" : ""
        let operations = scratch.replace(end..<end, with: Array((separator + addition).unicodeScalars))
        try contributeStep(operations, to: document)
        logger.info("session \(id): the editor's text went into \(document.uri) (\(addition.unicodeScalars.count) characters)")
    }

    /// A reopen that names a view the daemon kept: what the editor shows is resolved against
    /// exactly the elements that view showed at the editor's `revision` (what it was sent and
    /// applied), by the same path as a live edit, so whatever others did meanwhile merges by
    /// identity. When the editor's revision is not one the view can be at, what it changed from
    /// the view's text merges as text; when its epoch is not the view's (the reply that started
    /// the view's new epoch was lost), the view's text is no base for it: the editor's `base`
    /// is, else the open rules apply. The view is kept (nil is returned). Throws
    /// `documentTooLarge` when the document has no room for what the editor typed: nothing
    /// changes, and the view is kept for the editor's next reopen.
    private func resume(_ view: EditorView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
                        fileContent: [UInt8]?) throws(ResponseError) -> EditorView? {
        do {
            return try resolveReopen(view, of: document, request: request, editorText: editorText, fileContent: fileContent)
        } catch {
            daemon.keepDormant(view, of: document)
            throw error
        }
    }

    private func resolveReopen(_ view: EditorView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
                               fileContent: [UInt8]?) throws(ResponseError) -> EditorView? {
        guard let epoch = request.epoch, let revision = request.revision, epoch == view.epoch,
              let shown = view.text(atRevision: revision) else {
            logger.warning("session \(id): \(document.uri): epoch \(request.epoch ?? -1) revision \(request.revision ?? -1) is not where view \(view.id) can be; the reopen merges as text")
            if request.epoch == view.epoch {
                try mergeReopened(document, base: view.sent.string, editorText: editorText)
            } else if let base = request.base {
                try mergeReopened(document, base: applyingAcknowledged(request.pending, of: document, to: base), editorText: editorText)
            } else {
                try mergeOpened(document, request: request, editorText: editorText, fileContent: fileContent)
            }
            daemon.keepDormant(view, of: document)
            return nil
        }
        view.takeReplica(replica)
        view.encoding = encoding
        guard shown.string != editorText else { return view }
        let operations: [ReplicatingArrayOperation<Unicode.Scalar>]
        do {
            operations = try view.applyEditorEdit(epoch: epoch, revision: revision, changes: [.full(editorText)],
                                                  room: daemon.elementRoom(of: document))
        } catch where error.code == ResponseError.documentTooLargeCode {
            throw error
        } catch {
            logger.error("session \(id): \(document.uri): the reopen does not fit view \(view.id) (\(error.message)); it merges as text")
            try mergeReopened(document, base: shown.string, editorText: editorText)
            return nil
        }
        // What was typed while the daemon was away is one undo step of this session's own.
        try contributeStep(operations, to: document, edit: (view, epoch, revision))
        logger.info("session \(id): \(document.uri): the reopen resumed view \(view.id) with \(operations.count) operations")
        return view
    }

    /// A reopen that names a view whose elements went (`DetachedView`): what the editor changed
    /// from the text that view showed at its revision merges as text. Where the editor is at no
    /// revision the detached view knows, its `base` is the base, else the open rules apply. The
    /// detached view is gone afterwards either way (the editor gets a new view).
    private func resume(_ detached: DetachedView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
                        fileContent: [UInt8]?) throws(ResponseError) {
        if let shown = detached.text(epoch: request.epoch, revision: request.revision) {
            logger.info("session \(id): \(document.uri): view \(detached.id) kept only its text; the reopen merges as text against it")
            try mergeReopened(document, base: shown, editorText: editorText)
        } else if let base = request.base {
            try mergeReopened(document, base: applyingAcknowledged(request.pending, of: document, to: base), editorText: editorText)
        } else {
            try mergeOpened(document, request: request, editorText: editorText, fileContent: fileContent)
        }
        daemon.log(.closed(view: detached.id), of: document)
    }

    /// `base` with the edits of `pending` that `document` had applied (by edit ID) added: the
    /// replies of those were lost, but the edits are in the document and must count once. Edits
    /// arrive in order, so every pending edit up to the last one applied was applied (or was a
    /// no-op, which changes nothing here either).
    private func applyingAcknowledged(_ pending: [OpenDocumentRequest.PendingEdit], of document: SharedDocument, to base: String) -> String {
        guard let last = pending.lastIndex(where: { document.appliedEditIDs.contains($0.editID) }) else { return base }
        var text = ReplicatingText(base, replica: replica)
        for edit in pending[...last] {
            for change in edit.changes {
                do { _ = try ChangeResolver.apply(change, to: &text, encoding: encoding) } catch {
                    logger.error("session \(id): pending edit \(edit.editID) of \(document.uri) does not fit its base (\(error.message)); merging from there")
                    return text.string
                }
            }
        }
        logger.info("session \(id): \(last + 1) of \(pending.count) edits in flight had reached \(document.uri) before the daemon went away")
        return text.string
    }

    /// A resync that keeps the editor's text: its changes from `base` to `editorText` are resolved
    /// against the view's copy that shows `base` when there is one (the exact characters the
    /// editor saw, as an edit would be), and merged as text otherwise. Throws `documentTooLarge`,
    /// changing nothing, when the document has no room for them (the editor keeps its text).
    private func mergeResynced(_ document: SharedDocument, view: EditorView, base: String, editorText: String) throws(ResponseError) {
        guard base != editorText else { return }
        let copies = [view.sent, view.confirmed]
        guard let shown = copies.first(where: { $0.string == base }) else {
            try mergeReopened(document, base: base, editorText: editorText)
            return
        }
        try resolveResynced(document, shown: shown, editorText: editorText)
    }

    /// What the editor changed from `shown` (the view's copy of what it was sent, by identity)
    /// to `editorText` goes into `document` as this session's edit, one undo step. Throws
    /// `documentTooLarge`, changing nothing, when the document has no room for them.
    private func resolveResynced(_ document: SharedDocument, shown: ReplicatingText, editorText: String) throws(ResponseError) {
        guard shown.string != editorText else { return }
        var shown = shown
        shown.replica = replica
        let operations = ChangeResolver.replaceMinimally(0..<shown.count, with: Array(editorText.unicodeScalars), in: &shown)
        try contributeStep(operations, to: document)
        logger.info("session \(id): resync of \(document.uri) kept the editor's text (\(operations.count) operations)")
    }

    /// A reopen after the daemon went away: what the editor changed from `base` to `editorText`
    /// becomes this session's edits of `document`, merged with what the document gained meanwhile.
    /// Throws `documentTooLarge`, changing nothing, when the document has no room for them.
    private func mergeReopened(_ document: SharedDocument, base: String, editorText: String) throws(ResponseError) {
        let current = document.text
        let edits = TextMerge.edits(base: Array(base.unicodeScalars), current: Array(current.string.unicodeScalars),
                                    incoming: Array(editorText.unicodeScalars))
        guard !edits.isEmpty else { return }
        guard edits.allSatisfy({ $0.range.upperBound <= current.count }) else {
            logger.error("session \(id): the reopen merge of \(document.uri) produced edits outside the text; the daemon's text wins")
            return
        }
        var scratch = current
        scratch.replica = replica
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for edit in edits.reversed() { operations += scratch.replace(edit.range, with: edit.replacement) }
        // What was typed while the daemon was away is one undo step of this session's own.
        try contributeStep(operations, to: document)
        logger.info("session \(id): merged \(edits.count) edits made while the daemon was away into \(document.uri)")
    }

    /// `operations` of this session's into `document` (through `Daemon.contribute`, or as from
    /// outside every editor), then one undo step of its own. The daemon checks the document's
    /// room first: when it has none (`documentTooLarge`) nothing changes and no step is kept.
    private func contributeStep(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument,
                                fromOutside: Bool = false, group: Int? = nil, editID: String? = nil,
                                edit: (view: EditorView, epoch: Int, revision: Int)? = nil) throws(ResponseError) {
        let before = document.text
        if fromOutside {
            try daemon.contributeFromOutside(operations, to: document)
        } else {
            try daemon.contribute(operations, to: document, from: self, editID: editID, edit: edit)
        }
        histories[document.uri, default: UndoHistory()].record(operations, before: before, group: group)
    }

    /// Minimal changes that turn `old` into `new`, to apply in order (last in the text first, so
    /// each position is also a position in `old`).
    static func changes(from old: String, to new: String, in encoding: PositionEncoding) -> [WireChange] {
        let shown = ReplicatingText(old, replica: ReplicaID(0))
        return TextDiff.edits(from: Array(old.unicodeScalars), to: Array(new.unicodeScalars)).reversed().map { edit in
            let start = shown.position(ofOffset: edit.range.lowerBound, in: encoding)
            let end = shown.position(ofOffset: edit.range.upperBound, in: encoding)
            return .range(WireRange(start: WirePosition(line: start.line, character: start.character),
                                    end: WirePosition(line: end.line, character: end.character)),
                          text: String(String.UnicodeScalarView(edit.replacement)))
        }
    }

    /// Refuses, with an error and nothing changed, an edit of a document whose Lamport clock has
    /// too few counters left (a peer cannot push it there, as its counters are bounded on receipt,
    /// but a copy from before those bounds could be); never a trap.
    static func checkClock(of document: SharedDocument) throws(ResponseError) {
        guard document.text.scalars.canInsertLocally(count: 1 << 32) else {
            throw .internalError("document \(document.uri) cannot take edits: its Lamport clock is exhausted (\(document.text.scalars.lamportClock))")
        }
    }

    /// Applies an editor edit; returns the editor revision it became.
    private func edit(_ message: EditDocumentMessage) throws(ResponseError) -> Int {
        let (view, document) = try openViewAndDocument(message.uri)
        try Self.checkClock(of: document)
        // Held to the room the document has before the view changes (`ElementRoom`).
        let operations = try view.applyEditorEdit(epoch: message.epoch, revision: message.revision, changes: message.changes,
                                                  cursor: message.cursor, room: daemon.elementRoom(of: document))
        try contributeStep(operations, to: document, group: message.undoGroup, editID: message.editID,
                           edit: (view, message.epoch, message.revision))
        return view.editorRevision
    }

    private func updateSelections(_ message: CursorMessage) throws(ResponseError) {
        let (view, document) = try openViewAndDocument(message.uri)
        guard message.epoch == view.epoch, let text = view.text(atRevision: message.revision) else {
            logger.debug("session \(id): cursor update for an outdated revision ignored")
            return
        }
        var selections: [(anchor: SharedDocument.Anchor, head: SharedDocument.Anchor)] = []
        for range in message.selections {
            do {
                let start = try text.offset(of: TextPosition(line: range.start.line, character: range.start.character), in: encoding)
                let end = try text.offset(of: TextPosition(line: range.end.line, character: range.end.character), in: encoding)
                selections.append((SharedDocument.anchor(ofOffset: start, in: text), SharedDocument.anchor(ofOffset: end, in: text)))
            } catch {
                throw .positionOutOfRange(error.description)
            }
        }
        document.selections[id] = SharedDocument.RemoteSelection(user: user, selections: selections)
        daemon.broadcastSelections(of: self, in: document)
    }

    /// Sends session `sessionID`'s selections in `document`, positioned in what this editor was sent.
    func sendSelections(of sessionID: Int, in document: SharedDocument) {
        sendSelections(number: sessionID, selection: document.selections[sessionID], in: document)
    }

    /// Sends the selections of the editor numbered `number` (a session here, or an editor on
    /// another daemon); nil or none: it left the document.
    func sendSelections(number sessionID: Int, selection remote: SharedDocument.RemoteSelection?, in document: SharedDocument) {
        guard let view = views[document.uri] else { return }
        let text = view.sent
        var ranges: [WireRange] = []
        for selection in remote?.selections ?? [] {
            guard let start = SharedDocument.offset(of: selection.anchor, in: text),
                  let end = SharedDocument.offset(of: selection.head, in: text) else { continue }
            let a = text.position(ofOffset: start, in: encoding), b = text.position(ofOffset: end, in: encoding)
            ranges.append(WireRange(start: WirePosition(line: a.line, character: a.character), end: WirePosition(line: b.line, character: b.character)))
        }
        let message = CursorMessage(uri: document.uri, epoch: view.epoch, revision: view.editorRevision, selections: ranges,
                                    session: sessionID, user: remote?.user ?? WireUser(name: ""))
        send(.notification(method: CursorMessage.method, params: message.json))
    }

    /// Sends one daemon edit per document with operations this editor has not seen.
    func sendPendingEdits() {
        for uri in views.keys.sorted() {
            guard let view = views[uri], view.hasUnsentOperations else { continue }
            let edit = view.makeDaemonEdit(hashLimit: daemon.configuration.hashLimit)
            if let document = daemon.document(uri) { daemon.log(.sent(view: view.id), of: document) }
            guard let edit else { continue }
            send(.notification(method: EditDocumentMessage.method, params: edit.json))
        }
    }

    private func status() -> JSONValue {
        [
            "sessionId": .integer(Int64(id)), "replica": .string(replica.description),
            "sessions": .integer(Int64(daemon.sessions.count)),
            "documents": .array(daemon.documentList.map(\.json)),
            "peers": peerStatus(),
            "storage": storageStatus(),
            "summary": daemon.statusSummary(for: self),
        ]
    }

    /// Where documents are kept: null when in memory only.
    private func storageStatus() -> JSONValue {
        guard let store = daemon.store else { return .null }
        return [
            "dataDir": .string(store.path), "durability": .string(store.durability.rawValue),
            "failure": store.failure.map(JSONValue.string) ?? .null,
        ]
    }

    private func peerStatus() -> JSONValue {
        [
            "replica": .string(daemon.replica.description),
            "fingerprint": .string(daemon.identity.fingerprint),
            "listening": .array((daemon.transport?.listeningPorts ?? []).map { .integer(Int64($0)) }),
            "links": .array(daemon.links.values.sorted { $0.id < $1.id }.map { link in
                [
                    "link": .integer(Int64(link.id)), "state": .string(link.state.rawValue), "user": .string(link.peerUser ?? ""),
                    "address": .string(link.address), "bytesIn": .integer(Int64(link.bytesIn)), "bytesOut": .integer(Int64(link.bytesOut)),
                    "operationsIn": .integer(Int64(link.operationsIn)), "operationsOut": .integer(Int64(link.operationsOut)),
                    "behind": .integer(Int64(link.behind)),
                    "encrypted": .bool(link.isEncrypted), "fingerprint": link.peerFingerprint.map(JSONValue.string) ?? .null,
                    "pinned": .bool(link.expectedFingerprint != nil || !daemon.configuration.trustedPeerFingerprints.isEmpty),
                ]
            }),
            "documents": daemon.sharingStatus(),
        ]
    }

    private func peerTransport() throws(ResponseError) -> PeerTransport {
        guard daemon.configuration.peerSecret != nil else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Peering needs a shared secret: start quire with QUIRE_SECRET set or --secret-file")
        }
        guard let transport = daemon.transport else {
            throw ResponseError(code: ResponseError.unavailableCode, message: "This daemon has no network transport")
        }
        return transport
    }

    /// `peer/changed`: a peer joined, left or failed.
    /// Shows `message` to the editor's user as an error (`window/showMessage`, type 1).
    func showError(_ message: String) {
        send(.notification(method: "window/showMessage", params: ["type": 1, "message": .string(message)]))
    }

    /// Shows `message` to the editor's user as a warning (`window/showMessage`, type 2).
    func showWarning(_ message: String) {
        guard state == .running else { return }
        send(.notification(method: "window/showMessage", params: ["type": 2, "message": .string(message)]))
    }

    /// `link` 0 stands for several attempts told in one summary, or a connection refused
    /// before it became a link.
    func sendPeerChange(link: Int, event: String, user: String, address: String, reason: String?) {
        guard state == .running else { return }
        var params: [String: JSONValue] = ["link": .integer(Int64(link)), "event": .string(event), "user": .string(user),
                                           "address": .string(address), "linksUp": .integer(Int64(daemon.establishedLinkCount))]
        if let reason { params["reason"] = .string(reason) }
        send(.notification(method: PeerRequests.changedMethod, params: .object(params)))
    }

    private func openView(_ uri: String) throws(ResponseError) -> EditorView {
        guard let view = views[uri] else { throw .unknownDocument(uri) }
        return view
    }

    /// This session's view of `uri` and the document itself; unknown unless this session has
    /// it open.
    private func openViewAndDocument(_ uri: String) throws(ResponseError) -> (EditorView, SharedDocument) {
        guard let view = views[uri], let document = daemon.document(uri) else { throw .unknownDocument(uri) }
        return (view, document)
    }
}
