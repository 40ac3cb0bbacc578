import JSON

/// `quire/who` (editor -> daemon, request, no params): every person whose cursor this daemon
/// knows (its own editors and the editors of peers whose presence reached it), each with where
/// their cursor is in every document they have it in, most recent first. Positions are in the
/// asking editor's encoding: in the text the daemon has sent it for a document it has open, in
/// the document's current text otherwise. Clients build who-is-here, jump and follow on it.
public struct WhoRequest: EditorRequest, Equatable {
    public static let method = "quire/who"

    public init(params: JSONValue?) throws(ResponseError) {}

    /// `{people: [Person]}`, sorted by name.
    public struct Result: MessageResult, Equatable {
        public var people: [Person]

        public init(people: [Person]) { self.people = people }

        public var json: JSONValue { ["people": .array(people.map(\.json))] }
    }

    /// One person: `{name, color?, self, session, role?, at}`. `session` is the number
    /// `cursor/update` knows them by in their most recent document (`at[0]`); `self` marks the
    /// asking editor; `role` (`read`, `write`, `owner`) is theirs in the project of `at[0]`'s
    /// document, absent in the general scope or when this daemon cannot tell
    /// (protocol/decisions/roles.md, *Roles shown*).
    public struct Person: Sendable, Equatable {
        public var user: WireUser
        public var isSelf: Bool
        public var at: [Place]
        public var role: String?

        public init(user: WireUser, isSelf: Bool, at: [Place], role: String? = nil) {
            self.user = user
            self.isSelf = isSelf
            self.at = at
            self.role = role
        }

        public var json: JSONValue {
            var members: [String: JSONValue] = ["name": .string(user.name), "self": .bool(isSelf), "at": .array(at.map(\.json))]
            if let color = user.color { members["color"] = .string(color) }
            if let first = at.first { members["session"] = .integer(Int64(first.session)) }
            if let role { members["role"] = .string(role) }
            return .object(members)
        }
    }

    /// Where a person's cursor is in one document: `{uri, path?, line, character, session}`;
    /// `path` is the file this daemon has the document bound to, when it is bound, so a client can
    /// open it by path; `session` is the number `cursor/update` knows the person by in it.
    public struct Place: Sendable, Equatable {
        public var uri: String
        public var path: String?
        public var line: Int
        public var character: Int
        public var session: Int

        public init(uri: String, path: String?, line: Int, character: Int, session: Int) {
            self.uri = uri
            self.path = path
            self.line = line
            self.character = character
            self.session = session
        }

        public var json: JSONValue {
            var members: [String: JSONValue] = ["uri": .string(uri), "line": .integer(Int64(line)),
                                                "character": .integer(Int64(character)), "session": .integer(Int64(session))]
            if let path { members["path"] = .string(path) }
            return .object(members)
        }
    }
}
