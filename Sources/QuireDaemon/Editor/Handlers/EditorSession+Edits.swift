import JSON
import QuireProtocol
import ReplicatingTypes

// Edits of this session's: `document/edit` (request or notification), `document/merge`, the one
// path by which they reach the document and the undo history, and the daemon's edits sent back.

extension EditDocumentMessage: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> EditAcknowledgement {
        EditAcknowledgement(editorRevision: try session.edit(self))
    }
}

extension EditDocumentMessage: SessionNotification {
    func handle(in session: EditorSession) throws(ResponseError) {
        if let refusal = session.readOnlyRefusal(of: self) {
            // Once per document and epoch: a client that keeps typing is not told per keystroke.
            if refusal.first { session.notify(EditRefusedNotification(uri: uri, epoch: epoch, revision: revision, error: refusal.error)) }
            throw refusal.error
        }
        do {
            _ = try session.edit(self)
        } catch {
            // Nobody can be told through a reply: say it in a notification the editor words.
            session.notify(EditRefusedNotification(uri: uri, epoch: epoch, revision: revision, error: error))
            throw error
        }
    }
}

extension MergeDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result { try session.merge(self) }
}

extension EditorSession {
    /// Applies an editor edit; returns the editor revision it became.
    func edit(_ message: EditDocumentMessage) throws(ResponseError) -> Int {
        let (view, document) = try openViewAndDocument(message.uri)
        if let refusal = readOnlyRefusal(of: message) { throw refusal.error }
        try Self.checkClock(of: document)
        // Held to the room the document has before the view changes (`ElementRoom`).
        let operations = try view.applyEditorEdit(epoch: message.epoch, revision: message.revision, changes: message.changes,
                                                  cursor: message.cursor, room: daemon.elementRoom(of: document))
        try contributeStep(operations, to: document, group: message.undoGroup, editID: message.editID,
                           edit: (view, message.epoch, message.revision))
        return view.editorRevision
    }

    /// `document/merge`: the text of `from` goes to the end of `uri`, after a line break when
    /// `uri` does not end in one, as one undo step of this session's, made as from outside every
    /// editor (so this editor gets it too).
    func merge(_ request: MergeDocumentRequest) throws(ResponseError) -> MergeDocumentRequest.Result {
        let (_, document) = try openViewAndDocument(request.uri)
        try checkMayWrite(request.uri)
        guard let source = daemon.document(request.from) else { throw .unknownDocument(request.from) }
        var scratch = document.text
        scratch.replica = daemon.replica(forEditing: nil, of: document)
        let copied = source.text.string
        let end = scratch.count
        let endsInBreak = end == 0 || scratch.scalars.elements(in: (end - 1)..<end) == ["\n"]
        let separator = !endsInBreak && !copied.isEmpty ? "\n" : ""
        let operations = scratch.replace(end..<end, with: Array((separator + copied).unicodeScalars))
        try contributeStep(operations, to: document, fromOutside: true)
        logger.info("session \(id): merged \(request.from) into \(request.uri) (\(copied.unicodeScalars.count) characters)")
        return MergeDocumentRequest.Result(uri: request.uri, merged: copied.unicodeScalars.count)
    }

    /// `operations` of this session's into `document` (through `EditorHost.contribute`, or as from
    /// outside every editor), then one undo step of its own. The daemon checks the document's
    /// room first: when it has none (`documentTooLarge`) nothing changes and no step is kept.
    func contributeStep(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], to document: SharedDocument,
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


    /// Sends one daemon edit per document with operations this editor has not seen, in the
    /// order of their names.
    /// - Complexity: O(k log k) for the k documents whose view was given operations since the
    ///   last call (`UnsentViews`), whatever the number open; plus each edit's own cost.
    func sendPendingEdits() {
        for uri in unsentViews.take() {
            guard let view = views[uri], view.hasUnsentOperations else { continue }
            let edit = view.makeDaemonEdit(hashLimit: daemon.configuration.hashLimit)
            if let document = daemon.document(uri) { daemon.log(.sent(view: view.id), of: document) }
            guard let edit else { continue }
            notify(edit)
        }
    }

}
