import JSON

/// Requests that name one document and nothing else: `document/close` (stop sharing it in this
/// session; the reply is `null`), `document/text` (the daemon's current text),
/// `document/resync` (replace the editor's text with the daemon's and start a new epoch; with
/// `text`, what the editor shows, and `epoch` and `revision`, the daemon revision it is at, its
/// changes from what the daemon sent it are merged in first, by identity, so a resync never
/// drops what was typed; `base`, the text the daemon last acknowledged, instead of `epoch` and
/// `revision` is the older fallback, merged as text), and
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
    /// `document/resync` only: what the editor shows, and the epoch and daemon revision it is at
    /// (or, the fallback, the text the daemon last acknowledged).
    public var text: String?
    public var epoch: Int?
    public var revision: Int?
    public var base: String?
    /// `document/close` only: the editor rebinds the buffer (`:saveas`, `write-file`) and opens
    /// the document again at once, naming this view: the daemon keeps it as it keeps the view of
    /// an editor that went away, so the reopen is resolved against it by identity.
    public var keepView: Bool

    public init(params: JSONValue?) throws(ResponseError) {
        let reader = try ParamsReader(params)
        uri = try reader.string("uri")
        keepView = try reader.optionalBool("keepView") ?? false
        text = try reader.optionalString("text")
        epoch = try reader.optionalInt("epoch")
        revision = try reader.optionalInt("revision")
        base = try reader.optionalString("base")
        guard (epoch == nil) == (revision == nil) else { throw .invalidParams("params: epoch and revision go together") }
        if text == nil, base != nil || epoch != nil {
            throw .invalidParams("params.text: missing (base, epoch and revision say what the text is based on)")
        }
        if text != nil, base == nil, epoch == nil {
            throw .invalidParams("params: text needs epoch and revision (or base) to say what it is based on")
        }
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
