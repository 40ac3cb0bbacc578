import JSON

/// `document/open` (editor -> daemon, request): start sharing a document, named by `uri` (any
/// string: a `file:` URI or a plain name). `text` is what the editor shows now.
///
/// If the daemon does not have the document yet, it is created with `text`. If it does, the
/// daemon's text wins and the reply's `changes` turn the editor's text into it with minimal
/// edits. The editor applies them before sending anything else for this document.
///
/// `base`, for a reopen after the daemon went away: the text the editor last had in common with
/// the daemon. What changed from `base` to `text` is taken as this editor's edits and merged into
/// the daemon's text (`TextMerge`), so typing done while the daemon was away is kept.
///
/// `pending`, with `base`: the edits the editor sent after the last one the daemon acknowledged,
/// in order, each with its `editId` and `changes`. The daemon adds to `base` those it had applied
/// (it keeps edit IDs durably with the edits), so an edit whose reply was lost in the crash
/// counts once; the rest merge as typing done while the daemon was away.
///
/// `file` binds the document to a file on the daemon's machine (see `SaveDocumentRequest`).
public struct OpenDocumentRequest: Sendable, Equatable {
    public static let method = "document/open"

    public var uri: String
    public var text: String?
    public var base: String?
    /// An absolute path to bind the document to (`document/save` writes it; a change made to it
    /// outside Quire is merged in as edits when the document is opened or saved).
    public var file: String?
    public var pending: [PendingEdit] = []

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
        uri = try reader.string("uri")
        if let problem = DocumentName.problem(uri) { throw .invalidParams("params.uri: \(problem)") }
        text = try reader.optionalString("text")
        base = try reader.optionalString("base")
        file = try reader.optionalString("file")
        if let file, !file.hasPrefix("/") { throw .invalidParams("params.file: must be an absolute path, got \(file.debugDescription)") }
        if reader.has("pending") {
            guard base != nil else { throw .invalidParams("params.pending: only with base (a reopen)") }
            for edit in try reader.objects("pending") {
                guard let id = try EditDocumentMessage.editID(edit) else { throw .invalidParams("\(edit.path).editId: missing") }
                var changes: [WireChange] = []
                for change in try edit.objects("changes") { changes.append(try WireChange(change)) }
                pending.append(PendingEdit(editID: id, changes: changes))
            }
        }
    }

    public struct Result: Sendable {
        public var uri: String
        public var epoch: Int
        public var created: Bool
        public var changes: [WireChange]
        public var hash: String?

        public init(uri: String, epoch: Int, created: Bool, changes: [WireChange], hash: String?) {
            self.uri = uri
            self.epoch = epoch
            self.created = created
            self.changes = changes
            self.hash = hash
        }

        public var json: JSONValue {
            var members: [String: JSONValue] = [
                "uri": .string(uri), "epoch": .integer(Int64(epoch)), "created": .bool(created),
                "changes": .array(changes.map(\.json)),
            ]
            if let hash { members["hash"] = .string(hash) }
            return .object(members)
        }
    }
}
