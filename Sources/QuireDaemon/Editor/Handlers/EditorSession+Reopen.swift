import JSON
import QuireProtocol
import ReplicatingTypes

// A reopen after the daemon went away: resuming a kept view, merging against a detached one's
// text, or the older `base` fallback.

extension EditorSession {
    /// A reopen that names a view the daemon kept: what the editor shows is resolved against
    /// exactly the elements that view showed at the editor's `revision` (what it was sent and
    /// applied), by the same path as a live edit, so whatever others did meanwhile merges by
    /// identity. When the editor's revision is not one the view can be at, what it changed from
    /// the view's text merges as text; when its epoch is not the view's (the reply that started
    /// the view's new epoch was lost), the view's text is no base for it: the editor's `base`
    /// is, else the open rules apply. The view is kept (nil is returned). Throws
    /// `documentTooLarge` when the document has no room for what the editor typed: nothing
    /// changes, and the view is kept for the editor's next reopen.
    func resume(_ view: EditorView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
                        fileContent: [UInt8]?) throws(ResponseError) -> EditorView? {
        do {
            return try resolveReopen(view, of: document, request: request, editorText: editorText, fileContent: fileContent)
        } catch {
            daemon.keepDormant(view, of: document)
            throw error
        }
    }

    func resolveReopen(_ view: EditorView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
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
        // Its next edits continue the counters of a replica its copy holds every element of.
        view.takeReplica(daemon.replica(forEditing: view.confirmed, of: document, preferring: view.replica))
        view.encoding = encoding
        guard shown.string != editorText else { return view }
        try checkMayWrite(document.uri)   // before the view takes the editor's text
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
    func resume(_ detached: DetachedView, of document: SharedDocument, request: OpenDocumentRequest, editorText: String,
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
    func applyingAcknowledged(_ pending: [OpenDocumentRequest.PendingEdit], of document: SharedDocument, to base: String) -> String {
        guard let last = pending.lastIndex(where: { document.appliedEditIDs.contains($0.editID) }) else { return base }
        var text = ReplicatingText(base, replica: ReplicaID(0))   // only its text is used
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

    /// A reopen after the daemon went away: what the editor changed from `base` to `editorText`
    /// becomes this session's edits of `document`, merged with what the document gained meanwhile.
    /// Throws `documentTooLarge`, changing nothing, when the document has no room for them.
    func mergeReopened(_ document: SharedDocument, base: String, editorText: String) throws(ResponseError) {
        let current = document.text
        let edits = TextMerge.edits(base: Array(base.unicodeScalars), current: Array(current.string.unicodeScalars),
                                    incoming: Array(editorText.unicodeScalars))
        guard !edits.isEmpty else { return }
        guard edits.allSatisfy({ $0.range.upperBound <= current.count }) else {
            logger.error("session \(id): the reopen merge of \(document.uri) produced edits outside the text; the daemon's text wins")
            return
        }
        var scratch = current
        scratch.replica = daemon.replica(forEditing: nil, of: document)
        var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for edit in edits.reversed() { operations += scratch.replaceInPlace(edit.range, with: edit.replacement) }
        // What was typed while the daemon was away is one undo step of this session's own.
        try contributeStep(operations, to: document)
        logger.info("session \(id): merged \(edits.count) edits made while the daemon was away into \(document.uri)")
    }

}
