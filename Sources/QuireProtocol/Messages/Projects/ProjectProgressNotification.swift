import JSON

/// `project/progress` (daemon -> editor, notification): while a joined project's files arrive,
/// how many of the tree's `files` are on disk (`written`) and their `bytes`; sent to every
/// editor when the count moves, and a last time when `written` equals `files`.
public struct ProjectProgressNotification: DaemonNotification, Equatable {
    public static let method = "project/progress"

    public var key: String
    public var name: String
    public var files: Int
    public var written: Int
    public var bytes: Int

    public init(key: String, name: String, files: Int, written: Int, bytes: Int) {
        self.key = key
        self.name = name
        self.files = files
        self.written = written
        self.bytes = bytes
    }

    public var json: JSONValue {
        [
            "key": .string(key), "name": .string(name), "files": .integer(Int64(files)),
            "written": .integer(Int64(written)), "bytes": .integer(Int64(bytes)),
        ]
    }
}
