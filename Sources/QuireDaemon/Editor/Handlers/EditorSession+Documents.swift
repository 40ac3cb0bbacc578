import JSON
import QuireProtocol
import ReplicatingTypes

// Requests about one open document as a whole: close, text, resync, save, saved, list.

extension CloseDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> NullResult {
        let view = try session.openView(uri)
        if keepView, let document = session.daemon.document(uri) {
            // A rebind: the view is kept for the reopen that follows, and so is the undo history.
            let history = session.histories[uri]
            session.daemon.keepDormant(view, of: document)
            session.daemon.close(uri, in: session, forGood: false)
            session.histories[uri] = history
        } else {
            session.daemon.close(uri, in: session)
        }
        return NullResult()
    }
}

extension DocumentTextRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> DocumentTextResult {
        let view = try session.openView(uri)
        let text = view.sent.string
        return DocumentTextResult(uri: uri, text: text, epoch: view.epoch, hash: TextHash.sha256Hex(text))
    }
}

extension ResyncDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> DocumentTextResult { try session.resync(self) }
}

extension SaveDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        let (_, document) = try session.openViewAndDocument(uri)
        // A file of a project is read and written through the project's walk from its root, so
        // nothing planted on its path (a link, another user's folder), before or during, is used.
        let saved: (path: String, hash: String, imported: Int)
        if let path = document.file?.path, let inProject = try session.daemon.projects.save(document, boundTo: path) {
            saved = inProject
        } else {
            saved = try session.daemon.save(document)
        }
        return Result(uri: uri, path: saved.path, hash: saved.hash, importedEdits: saved.imported)
    }
}

extension SavedDocumentNotification: SessionNotification {
    func handle(in session: EditorSession) throws(ResponseError) {
        let (view, document) = try session.openViewAndDocument(uri)
        guard epoch == view.epoch else { throw .staleEpoch(got: epoch, current: view.epoch) }
        guard let text = view.text(atRevision: revision) else {
            throw .invalidParams("params.revision: \(revision) is not a revision this editor can be at")
        }
        session.daemon.editorSaved(document, text: text)
    }
}

extension ListDocumentsRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result { Result(session.daemon.documentList) }
}

extension EditorSession {
    /// `document/resync`: the editor's changes go in first when it sends its text, then its view
    /// starts a new epoch at the document's text.
    func resync(_ request: ResyncDocumentRequest) throws(ResponseError) -> DocumentTextResult {
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
        return DocumentTextResult(uri: request.uri, text: text, epoch: view.epoch, hash: TextHash.sha256Hex(text))
    }

    /// A resync that keeps the editor's text: its changes from `base` to `editorText` are resolved
    /// against the view's copy that shows `base` when there is one (the exact characters the
    /// editor saw, as an edit would be), and merged as text otherwise. Throws `documentTooLarge`,
    /// changing nothing, when the document has no room for them (the editor keeps its text).
    func mergeResynced(_ document: SharedDocument, view: EditorView, base: String, editorText: String) throws(ResponseError) {
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
    func resolveResynced(_ document: SharedDocument, shown: ReplicatingText, editorText: String) throws(ResponseError) {
        guard shown.string != editorText else { return }
        var shown = shown   // a live view's copy: edited as the view's own replica
        let operations = ChangeResolver.replaceMinimally(0..<shown.count, with: Array(editorText.unicodeScalars), in: &shown)
        try contributeStep(operations, to: document)
        logger.info("session \(id): resync of \(document.uri) kept the editor's text (\(operations.count) operations)")
    }

}
