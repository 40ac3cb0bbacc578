import JSON
import QuireProtocol
import ReplicatingTypes

// `document/open`: naming, the open rules (open never destroys text) and the view it starts.

extension OpenDocumentRequest: SessionRequest {
    func answer(in session: EditorSession) throws(ResponseError) -> Result {
        var given = self
        // A project file named by another path to it is the project's file (read and saved through its walk).
        given.file = file.map(session.daemon.projects.editorPath(ofFile:))
        let request = try session.named(given)
        if ifShared, DocumentScope.projectKey(inURI: request.uri) == nil { return .notShared }
        var result = try session.open(request)
        if ifShared { result.shared = true }
        return result
    }
}

extension EditorSession {
    /// `request` with its document named, when the editor left that to the daemon: a file of a
    /// shared or joined project by the project's tree (`@key/fileID`), any other by the naming rule.
    func named(_ request: OpenDocumentRequest) throws(ResponseError) -> OpenDocumentRequest {
        guard request.leavesNamingToDaemon || request.ifShared, let file = request.file else { return request }
        var named = request
        if let name = daemon.projects.documentName(ofFile: file) {
            named.uri = name
            return named
        }
        // A partner's file at a path the project ignores (`.env`): this one is not joined to it.
        if let why = daemon.projects.ignoredTreeFileReason(file) { showWarning(why) }
        guard request.leavesNamingToDaemon else { return request }
        named.uri = ProjectNaming.documentName(ofFile: file)
        if let problem = DocumentName.problem(named.uri) { throw .invalidParams("params.file: names no document: \(problem)") }
        return named
    }

    /// Opens (or reopens) `request.uri` in this session by the open rules, binds its file, and
    /// starts this editor's view; the reply's `changes` take the editor from its text to the
    /// document's. Throws, changing nothing, when the open would lose text (-32017) or the
    /// document has no room for the editor's (-32018).
    func open(_ request: OpenDocumentRequest) throws(ResponseError) -> OpenDocumentRequest.Result {
        guard views[request.uri] == nil else { throw .documentAlreadyOpen(request.uri) }
        let editorText = request.text ?? ""
        // Read before anything changes: a file that cannot be read refuses the open.
        let fileContent = try request.file.map { file throws(ResponseError) in try daemon.projects.readForEditor(file) }
        if let existing = daemon.document(request.uri) {
            try checkOpenKeepsText(of: existing, request: request, editorText: editorText)
        } else if Self.holdsText(editorText) {
            try checkMayWrite(request.uri)   // it would be created with the editor's text
        }
        let (document, created) = try daemon.openDocument(request.uri) {
            FreshText.make(editorText, replica: daemon.localReplicas.pick(forEditing: nil, of: ReplicatingText(replica: ReplicaID(0)), avoiding: []))
        }
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
            do { try daemon.mergeOutsideChanges(of: document) } catch { showError(error.message) }
        }
        let opened: EditorView
        if let view {
            view.resync(to: document.text)
            daemon.log(.resynced(view: view.id), of: document)
            opened = view
        } else {
            opened = EditorView(id: daemon.makeViewID(), uri: request.uri, text: document.text,
                                replica: daemon.replica(forEditing: nil, of: document), encoding: encoding)
            daemon.log(.opened(view: opened.id), of: document)
        }
        show(opened, as: request.uri)
        // Tell the editor how to get from what it shows to the document's text.
        // A document just made from the editor's text, with no file merged into it, holds that
        // text: its hash is the editor text's, and no copy of the document's text is built.
        let target = created && request.file == nil && document.file == nil ? editorText : document.text.string
        let changes = created || target == editorText ? [] : Self.changes(from: editorText, to: target, in: encoding)
        daemon.sendAllSelections(in: document, to: self)
        logger.info("session \(id): opened \(request.uri) (\(created ? "created" : view != nil ? "its view resumed" : "joined"), \(document.text.count) characters)")
        var result = OpenDocumentRequest.Result(uri: request.uri, epoch: opened.epoch, created: created, changes: changes,
                                                hash: TextHash.sha256Hex(target), view: opened.id)
        result.readOnlyReason = readOnlyAtOpen(request.uri, view: opened)
        return result
    }

    /// Throws, changing nothing, when opening `document` with `editorText` would replace text the
    /// editor shows with no way to keep it: the editor shows other text than the document, has no
    /// view or base to say what it changed, the document has edits, no bound file gives a base,
    /// and the editor did not say what the person chose (`conflict`).
    func checkOpenKeepsText(of document: SharedDocument, request: OpenDocumentRequest, editorText: String) throws(ResponseError) {
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
    func mergeOpened(_ document: SharedDocument, request: OpenDocumentRequest, editorText: String,
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
    func contributeAppended(_ addition: String, to document: SharedDocument, separated: Bool) throws(ResponseError) {
        var scratch = document.text
        scratch.replica = daemon.replica(forEditing: nil, of: document)
        let end = scratch.count
        let endsInBreak = end == 0 || scratch.scalars.elements(in: (end - 1)..<end) == ["\n"]
        let separator = separated && !endsInBreak ? "\n" : ""
        let operations = scratch.replace(end..<end, with: Array((separator + addition).unicodeScalars))
        try contributeStep(operations, to: document)
        logger.info("session \(id): the editor's text went into \(document.uri) (\(addition.unicodeScalars.count) characters)")
    }

}
