import JSON
import QuireProtocol
import ReplicatingTypes

// Selections: the editor's own (`cursor/update` in) and others' sent to it (`cursor/update` out).

extension CursorMessage: SessionNotification {
    func handle(in session: EditorSession) throws(ResponseError) { try session.updateSelections(self) }
}

extension EditorSession {
    func updateSelections(_ message: CursorMessage) throws(ResponseError) {
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
        cursorUpdates &+= 1
        document.selections[id] = SharedDocument.RemoteSelection(user: user, selections: selections, moved: cursorUpdates)
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
        notify(message)
    }

}
