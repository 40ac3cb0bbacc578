import JSON

/// `document/open` (editor -> daemon, request): start sharing a document, named by `uri` (any
/// string: a `file:` URI or a plain name). `text` is what the editor shows now.
///
/// If the daemon does not have the document yet, it is created with `text`. If it does, opening
/// never destroys text: a document never edited takes `text`; a document bound to the same
/// `file` merges what the editor changed from the file's last synced text; a document with the
/// same text needs nothing; otherwise the daemon refuses (-32017, changing nothing) until the
/// editor says what the person chose in `conflict`: `take` (the shared text replaces the
/// editor's) or `merge` (the editor's text is added after the shared text). The reply's
/// `changes` turn the editor's text into the document's with minimal edits; the editor applies
/// them before sending anything else for this document. The reply's `view` names the daemon's
/// durable record of what this editor was sent and did.
///
/// A reopen after the daemon went away sends `view`, `epoch` and `revision` (the daemon
/// revision the editor had applied): `text` is resolved against exactly what that view showed
/// at that revision, by element identity, like a live edit (protocol/decisions/durable-views.md).
/// When the daemon has no such view (its data directory was lost), `base`, the text the editor
/// last had in common with the daemon, lets it merge as text (`TextMerge`); `pending`, with
/// `base`: the edits sent after the last acknowledged one, each with its `editId` and
/// `changes`; the daemon adds to `base` those it had applied, so each counts once.
///
/// `file` binds the document to a file on the daemon's machine (see `SaveDocumentRequest`); a
/// `file` holding U+FFFD is refused (-32602, `EditorPath`): it may stand for bytes that are not
/// UTF-8 and name another file. `uri` is only a name: a `file:` URI is never decoded to a path.
/// With `file` and no `uri`, the daemon names the document by the naming rule (its path from its
/// project root) and says the name in the reply's `uri`. With `ifShared` (and `file`), the
/// daemon opens the document only when the file lies in a project it shares or joined
/// (protocol/decisions/project-sharing.md); otherwise it answers `{shared: false}` and creates
/// nothing, so a client can send it for every file it reads.
public struct OpenDocumentRequest: EditorRequest, Equatable {
    public static let method = "document/open"

    /// Empty until named when the editor left the naming to the daemon (`leavesNamingToDaemon`).
    public var uri: String
    public var text: String?
    public var base: String?
    /// An absolute path to bind the document to (`document/save` writes it; a change made to it
    /// outside Quire is merged in as edits when the document is opened or saved).
    public var file: String?
    public var pending: [PendingEdit] = []
    /// A reopen: the view the daemon gave this editor, and the epoch and daemon revision the
    /// editor is at in it.
    public var view: String?
    public var epoch: Int?
    public var revision: Int?
    /// What the person chose when the document exists with other text (-32017).
    public var conflict: Conflict?
    /// Open only a file of a shared or joined project (`{shared: false}` otherwise).
    public var ifShared = false

    /// The editor sent `file` and no `uri`: the daemon names the document.
    public var leavesNamingToDaemon: Bool { uri.isEmpty }

    /// The person's choice for an open whose text differs from the shared document's.
    public enum Conflict: String, Sendable, Equatable {
        /// The shared text replaces what the editor shows.
        case take
        /// The editor's text is added after the shared text (one undo step of the editor's).
        case merge
    }

    /// An edit sent but never acknowledged, as the editor sent it.
    public struct PendingEdit: Sendable, Equatable {
        public var editID: String
        public var changes: [WireChange]

        public init(editID: String, changes: [WireChange]) {
            self.editID = editID
            self.changes = changes
        }
    }

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        text = try reader.optionalString("text")
        base = try reader.optionalString("base")
        file = try reader.optionalString("file")
        if let file, !file.hasPrefix("/") { throw .invalidParams("params.file: must be an absolute path, got \(file.debugDescription)") }
        if let file, let problem = EditorPath.problem(file) { throw .invalidParams("params.file: \(problem)") }
        if let uri = try reader.optionalString("uri") {
            if let problem = DocumentName.problem(uri) { throw .invalidParams("params.uri: \(problem)") }
            self.uri = uri
        } else if file != nil {
            uri = ""
        } else {
            throw .invalidParams("params.uri: missing (send uri, or file to have the daemon name the document)")
        }
        ifShared = try reader.optionalBool("ifShared") ?? false
        if ifShared, file == nil { throw .invalidParams("params.ifShared: only with params.file") }
        view = try reader.optionalString("view")
        if let view, view.isEmpty || view.utf8.count > 64 { throw .invalidParams("params.view: must be 1 to 64 bytes") }
        epoch = try reader.optionalInt("epoch")
        revision = try reader.optionalInt("revision")
        if let epoch, epoch < 0 { throw .invalidParams("params.epoch: must not be negative") }
        if let revision, revision < 0 { throw .invalidParams("params.revision: must not be negative") }
        if let choice = try reader.optionalString("conflict") {
            guard let conflict = Conflict(rawValue: choice) else {
                throw .invalidParams("params.conflict: \(choice.debugDescription) is neither \"take\" nor \"merge\"")
            }
            self.conflict = conflict
        }
        if reader.has("pending") {
            guard base != nil || view != nil else { throw .invalidParams("params.pending: only with base or view (a reopen)") }
            for edit in try reader.objects("pending") {
                guard let id = try EditDocumentMessage.editID(edit) else { throw .invalidParams("\(edit.path).editId: missing") }
                var changes: [WireChange] = []
                for change in try edit.objects("changes") { changes.append(try WireChange(change)) }
                pending.append(PendingEdit(editID: id, changes: changes))
            }
        }
    }

    /// `{uri, epoch, created, changes, hash, view}`, with `shared: true` when asked `ifShared`;
    /// `{shared: false}` alone when asked `ifShared` of a file in no project (`notShared`).
    public struct Result: MessageResult {
        public var uri: String
        public var epoch: Int
        public var created: Bool
        public var changes: [WireChange]
        public var hash: String?
        /// The durable name of this editor's view, to send back on a reopen.
        public var view: String?
        /// Set only for an open asked `ifShared`.
        public var shared: Bool?
        /// Why this editor may not change the document (this daemon's role in its project does
        /// not allow writing: protocol/decisions/roles.md); nil when it may. The reply then says
        /// `readOnly: true` and this as `readOnlyReason`.
        public var readOnlyReason: String?

        /// The reply to an `ifShared` open of a file in no project: nothing was opened.
        public static let notShared: Result = {
            var result = Result(uri: "", epoch: 0, created: false, changes: [], hash: nil)
            result.shared = false
            return result
        }()

        public init(uri: String, epoch: Int, created: Bool, changes: [WireChange], hash: String?, view: String? = nil) {
            self.view = view
            self.uri = uri
            self.epoch = epoch
            self.created = created
            self.changes = changes
            self.hash = hash
        }

        public var json: JSONValue {
            if shared == false { return ["shared": false] }
            var members: [String: JSONValue] = [
                "uri": .string(uri), "epoch": .integer(Int64(epoch)), "created": .bool(created),
                "changes": .array(changes.map(\.json)),
            ]
            if let hash { members["hash"] = .string(hash) }
            if let view { members["view"] = .string(view) }
            if let shared { members["shared"] = .bool(shared) }
            if let readOnlyReason {
                members["readOnly"] = true
                members["readOnlyReason"] = .string(readOnlyReason)
            }
            return .object(members)
        }
    }
}
