import JSON
import QuireProtocol
import ReplicatingTypes

// `document/undo` and `document/redo`: this session's own steps, leaving others' edits alone.

extension UndoDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> UndoResult { try session.undoOrRedo(uri, undo: true) }
}

extension RedoDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> UndoResult { try session.undoOrRedo(uri, undo: false) }
}

extension EditorSession {
    /// Reverts (`undo`) or reapplies this session's last step of `uri`, made as from outside
    /// every editor on a copy of the document; `done` is false when there was no step. A step
    /// the document has no room for stays where it is (`documentTooLarge`).
    func undoOrRedo(_ uri: String, undo: Bool) throws(ResponseError) -> UndoResult {
        let (_, document) = try openViewAndDocument(uri)
        try checkMayWrite(uri)
        var text = document.text
        text.replica = daemon.replica(forEditing: nil, of: document)
        // On a copy of the history: a step the document has no room for stays where it is.
        var history = histories[uri, default: UndoHistory()]
        let operations = undo ? history.undo(in: &text) : history.redo(in: &text)
        try daemon.contributeFromOutside(operations, to: document)
        histories[uri] = history
        return UndoResult(uri: uri, done: !operations.isEmpty)
    }
}
