import JSON

/// `document/readOnly` (daemon -> editor, notification): whether this editor may change document
/// `uri` changed, because this daemon's role in the document's project changed
/// (protocol/decisions/roles.md, *Enforcement*). `readOnly: true`: its edits, undo, redo, merge
/// and a resync carrying other text are refused (-32019) and change nothing, so the client makes
/// the buffer read-only; `false`: it may edit again. `reason` is a sentence a client may show as
/// it is ("you can read notes but not change it (role read)"); `project` (the project's name)
/// and `role` (`read`, `write`, `owner`; absent when this daemon has none) are the facts it says.
/// Sent once per open view whose writability changed, never for documents of no project.
public struct ReadOnlyNotification: DaemonNotification, Equatable {
    public static let method = "document/readOnly"

    public var uri: String
    public var readOnly: Bool
    public var reason: String
    public var project: String
    public var role: String?

    public init(uri: String, readOnly: Bool, reason: String, project: String, role: String?) {
        self.uri = uri
        self.readOnly = readOnly
        self.reason = reason
        self.project = project
        self.role = role
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["uri": .string(uri), "readOnly": .bool(readOnly), "reason": .string(reason),
                                            "project": .string(project)]
        if let role { members["role"] = .string(role) }
        return .object(members)
    }
}
