import JSON

/// `document/list` (editor -> daemon, request, no params): every document the daemon holds,
/// its peers' included, sorted by name.
public struct ListDocumentsRequest: EditorRequest, Equatable {
    public typealias Result = DocumentList
    public static let method = "document/list"

    public init(params: JSONValue?) throws(ResponseError) {}

    /// One document: `{uri, lines, characters, editors}` (`editors`: sessions here that have it open).
    public struct Entry: Sendable, Equatable {
        public var uri: String
        public var lines: Int
        public var characters: Int
        public var openInSessions: Int

        public init(uri: String, lines: Int, characters: Int, openInSessions: Int) {
            self.uri = uri
            self.lines = lines
            self.characters = characters
            self.openInSessions = openInSessions
        }

        public var json: JSONValue {
            ["uri": .string(uri), "lines": .integer(Int64(lines)), "characters": .integer(Int64(characters)),
             "editors": .integer(Int64(openInSessions))]
        }
    }
}

/// The reply to `document/list`: an array of `ListDocumentsRequest.Entry`.
public struct DocumentList: MessageResult, Equatable {
    public var entries: [ListDocumentsRequest.Entry]

    public init(_ entries: [ListDocumentsRequest.Entry]) {
        self.entries = entries
    }

    public var json: JSONValue { .array(entries.map(\.json)) }
}
