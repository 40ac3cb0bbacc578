import JSON

/// `cursor/update`, both directions.
///
/// Editor -> daemon (notification): the editor's selections in `uri`, positioned in its text at
/// daemon `revision` of `epoch`; a cursor is an empty selection. Daemon -> editor
/// (notification): another session's selections, with its `user` and `session` id, in the
/// receiver's current text; an empty list means that session left the document.
public struct CursorMessage: EditorNotification, DaemonNotification, Equatable {
    public static let method = "cursor/update"

    public var uri: String
    public var epoch: Int
    public var revision: Int
    public var selections: [WireRange]
    public var session: Int?
    public var user: WireUser?

    public init(uri: String, epoch: Int, revision: Int, selections: [WireRange], session: Int?, user: WireUser?) {
        self.uri = uri
        self.epoch = epoch
        self.revision = revision
        self.selections = selections
        self.session = session
        self.user = user
    }

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        epoch = try reader.optionalInt("epoch") ?? 0
        revision = try reader.nonNegativeInt("revision")
        var selections: [WireRange] = []
        for s in try reader.objects("selections") { selections.append(try WireRange(s)) }
        self.selections = selections
        session = nil
        user = nil
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "uri": .string(uri), "epoch": .integer(Int64(epoch)), "revision": .integer(Int64(revision)),
            "selections": .array(selections.map(\.json)),
        ]
        if let session { members["session"] = .integer(Int64(session)) }
        if let user { members["user"] = user.json }
        return .object(members)
    }
}
