import JSON

/// `document/edit`, both directions.
///
/// Editor -> daemon (a request, whose reply acknowledges the edit once applied, or a
/// notification): `revision` is the number of daemon edits the editor has applied in `epoch`.
/// Daemon -> editor (a notification): `revision` is the number of editor edits the daemon had
/// applied in `epoch` when it made this one; the editor applies it only if that equals its own
/// count of edits sent, and drops it otherwise (the daemon then resends). `hash` is the SHA-256
/// (hex) of the editor's whole text after applying, when the document is small enough.
public struct EditDocumentMessage: EditorRequest, EditorNotification, DaemonNotification, Equatable {
    public typealias Result = EditAcknowledgement
    public static let method = "document/edit"

    public var uri: String
    public var epoch: Int
    public var revision: Int
    public var changes: [WireChange]
    public var hash: String?
    /// Editor to daemon: the editor's undo block this edit belongs to (Vim's `changenr()`);
    /// consecutive edits with the same value are undone together by `document/undo`.
    public var undoGroup: Int?
    /// Editor to daemon: where the editor's cursor is after the change, in its text after it.
    /// It places typed text that could stand at several places (resent lines, full text).
    public var cursor: WirePosition?
    /// Editor to daemon: a name for this edit, unique for the editor, that the daemon keeps
    /// durably with the edit, so a reopen after the daemon died can tell which edits in flight
    /// were applied (`OpenDocumentRequest.pending`). At most `maxEditIDBytes` bytes.
    public var editID: String?

    public static let maxEditIDBytes = 128

    public init(uri: String, epoch: Int, revision: Int, changes: [WireChange], hash: String? = nil) {
        self.uri = uri
        self.epoch = epoch
        self.revision = revision
        self.changes = changes
        self.hash = hash
    }

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        epoch = try reader.optionalInt("epoch") ?? 0
        revision = try reader.nonNegativeInt("revision")
        var changes: [WireChange] = []
        for change in try reader.objects("changes") { changes.append(try WireChange(change)) }
        self.changes = changes
        hash = try reader.optionalString("hash")
        undoGroup = try reader.optionalInt("undoGroup")
        cursor = try reader.optionalObject("cursor").map { reader throws(ResponseError) in try WirePosition(reader) }
        editID = try Self.editID(reader)
    }

    /// The optional `editId` of `reader`, checked against the length bound.
    static func editID(_ reader: ParamsReader) throws(ResponseError) -> String? {
        guard let id = try reader.optionalString("editId") else { return nil }
        guard !id.isEmpty, id.utf8.count <= maxEditIDBytes else {
            throw .invalidParams("\(reader.path).editId: must be 1 to \(maxEditIDBytes) bytes, got \(id.utf8.count)")
        }
        return id
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "uri": .string(uri), "epoch": .integer(Int64(epoch)), "revision": .integer(Int64(revision)),
            "changes": .array(changes.map(\.json)),
        ]
        if let hash { members["hash"] = .string(hash) }
        return .object(members)
    }

}

/// The reply to an editor's `document/edit` request: `{editorRevision}`, the editor revision
/// the edit became (it is in the document and, under `sync` durability, on disk).
public struct EditAcknowledgement: MessageResult, Equatable {
    public var editorRevision: Int

    public init(editorRevision: Int) {
        self.editorRevision = editorRevision
    }

    public var json: JSONValue { ["editorRevision": .integer(Int64(editorRevision))] }
}
