import JSON

/// Requests that name one document and nothing else: `document/close` (stop sharing it in this
/// session; the reply is `null`), `document/text` (the daemon's current text),
/// `document/resync` (replace the editor's text with the daemon's and start a new epoch; with
/// `text` and `base`, the editor's changes from `base`, the text the daemon last acknowledged,
/// to `text`, what it shows, are merged in first, so a resync never drops what was typed), and
/// `document/undo` / `document/redo` (revert this session's last step of its own edits, or
/// reapply the last one undone, leaving others' edits alone; the reply is `{uri, done}` and the
/// change reaches the editor as a daemon edit).
public struct DocumentRequest: Sendable, Equatable {
    public static let closeMethod = "document/close"
    public static let textMethod = "document/text"
    public static let resyncMethod = "document/resync"
    public static let undoMethod = "document/undo"
    public static let redoMethod = "document/redo"

    public var uri: String
    /// `document/resync` only: what the editor shows, and the text the daemon last acknowledged.
    public var text: String?
    public var base: String?

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        text = try reader.optionalString("text")
        base = try reader.optionalString("base")
        guard (text == nil) == (base == nil) else { throw .invalidParams("params: text and base go together") }
    }

    /// The reply to `document/text` and `document/resync`.
    public struct TextResult: Sendable {
        public var uri: String
        public var text: String
        public var epoch: Int
        public var hash: String

        public init(uri: String, text: String, epoch: Int, hash: String) {
            self.uri = uri
            self.text = text
            self.epoch = epoch
            self.hash = hash
        }

        public var json: JSONValue {
            ["uri": .string(uri), "text": .string(text), "epoch": .integer(Int64(epoch)), "hash": .string(hash)]
        }
    }
}

/// `document/list` (editor -> daemon, request, no params): every document the daemon holds.
public enum ListDocumentsRequest {
    public static let method = "document/list"

    public struct Entry: Sendable {
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
