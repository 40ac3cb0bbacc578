import QuireProtocol

// Read-only documents (protocol/decisions/roles.md, *Enforcement*): where this daemon's role in
// a project does not allow writing, its editors' edits of the project's documents are refused
// (-32019) and change nothing; the editor is told at open (`readOnly`) and whenever that
// changes (`document/readOnly`).

extension EditorSession {
    /// Throws `readOnly` when this daemon may not change document `uri`.
    func checkMayWrite(_ uri: String) throws(ResponseError) {
        if let reason = daemon.readOnlyReason(ofDocument: uri) { throw reason.error(uri: uri) }
    }

    /// The refusal of an editor edit of a read-only document, before anything of it is
    /// resolved (nil when the document may be changed). The view refuses the epoch's later
    /// edits from then on (the editor shows this one), so after a change of role the editor
    /// resyncs before editing on. `first`: the epoch's first refusal, which a notification edit
    /// reports (`document/editRefused`); later ones of the epoch are dropped with no word, so a
    /// client that keeps typing hears it once, not per keystroke.
    func readOnlyRefusal(of edit: EditDocumentMessage) -> (error: ResponseError, first: Bool)? {
        guard let view = views[edit.uri], let reason = daemon.readOnlyReason(ofDocument: edit.uri) else { return nil }
        let error = reason.error(uri: edit.uri)
        let first = view.refuseRest(of: edit.epoch, reason: error.message)
        if first { logger.info("session \(id): edits of \(edit.uri) refused: \(reason.sentence)") }
        return (error, first)
    }

    /// What the `document/open` reply says of writing: `reason` when the editor may not change
    /// `uri`; the view remembers what it was told.
    func readOnlyAtOpen(_ uri: String, view: EditorView) -> String? {
        let reason = daemon.readOnlyReason(ofDocument: uri)
        view.toldReadOnly = reason != nil
        return reason?.sentence
    }

    /// This daemon's role in project `key` may have changed: `document/readOnly` for every open
    /// document of the project whose writability is not what its editor was last told.
    func projectRolesChanged(key: String) {
        guard state == .running else { return }
        for uri in openDocuments where DocumentScope.projectKey(inURI: uri) == key {
            guard let view = views[uri] else { continue }
            let reason = daemon.readOnlyReason(ofDocument: uri)
            guard (reason != nil) != view.toldReadOnly else { continue }
            view.toldReadOnly = reason != nil
            let role = daemon.projectAccess?.ownRole(inProject: key)
            let name = reason?.name ?? daemon.projectName(key)
            let sentence = reason?.sentence ?? "you can change \(name) again (\(role.map { "role \($0.rawValue)" } ?? "no role"))"
            logger.info("session \(id): \(uri) is \(reason == nil ? "writable" : "read-only") now: \(sentence)")
            notify(ReadOnlyNotification(uri: uri, readOnly: reason != nil, reason: sentence, project: name, role: role?.rawValue))
        }
    }
}
