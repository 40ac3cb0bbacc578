import JSON
import QuireDaemon
import QuireProject

/// A shared project as `project/share` answers it, with everything from the daemon checked,
/// cleaned and bounded for the terminal.
///
/// Guarantees: `key` is 1 to 64 lowercase letters and digits (it is sent back in `project/stop`
/// and compared with notifications); `line` reads back as a `JoinLine` (what is printed works);
/// names, paths, reasons and addresses are cleaned (`ConsoleScreen.clean`); at most
/// `ConsoleScreen.shownLeftOut` left-out files and 16 addresses are kept, the rest counted.
public struct SharedProject: Equatable, Sendable {
    public struct LeftOut: Equatable, Sendable {
        public var path: String
        public var reason: String
    }

    public var key: String
    public var name: String
    public var root: String
    public var line: String
    public var files: Int
    public var leftOut: [LeftOut]
    public var leftOutCount: Int
    public var addresses: [String]
    /// The file shared by itself (a project of one file), cleaned; nil for a folder.
    public var file: String?

    public init(reply: JSONValue) throws(ConsoleError) {
        let method = "project/share"
        key = try ProjectKey.read(reply["key"], method: method)
        name = ConsoleScreen.clean(reply["name"]?.stringValue ?? "", limit: JoinLine.maximumNameBytes)
        root = ConsoleScreen.clean(reply["root"]?.stringValue ?? "", limit: ConsoleScreen.pathLimit)
        let parsed = try ReplyJoinLine.read(reply["line"], method: method)
        line = parsed.encoded
        if name.isEmpty { name = parsed.name }
        files = Self.count(reply["files"])
        let skipped = reply["skipped"]?.arrayValue ?? []
        leftOutCount = skipped.count
        leftOut = skipped.prefix(ConsoleScreen.shownLeftOut).map { entry in
            LeftOut(path: ConsoleScreen.clean(entry["path"]?.stringValue ?? "?", limit: ConsoleScreen.pathLimit),
                    reason: ConsoleScreen.clean(entry["reason"]?.stringValue ?? "", limit: DisplayText.maximumReasonLength))
        }
        addresses = (reply["addresses"]?.arrayValue ?? []).prefix(16).compactMap { $0.stringValue }
            .map { ConsoleScreen.clean($0, limit: ConsoleScreen.pathLimit) }.filter { !$0.isEmpty }
        file = reply["file"]?.stringValue.map { ConsoleScreen.clean($0, limit: ConsoleScreen.pathLimit) }
    }

    /// A count the daemon gives as a number, or as the list it counts; 0 when it gives neither.
    static func count(_ value: JSONValue?) -> Int {
        if let number = value?.integerValue { return Int(clamping: max(0, number)) }
        return value?.arrayValue?.count ?? 0
    }
}

/// A joined project as `project/join` answers it, checked and cleaned like `SharedProject`.
public struct JoinedProject: Equatable, Sendable {
    public var key: String
    public var name: String
    public var directory: String
    public var files: Int

    public init(reply: JSONValue, line: JoinLine, directory asked: String) throws(ConsoleError) {
        key = try ProjectKey.read(reply["key"], method: "project/join")
        let name = ConsoleScreen.clean(reply["name"]?.stringValue ?? "", limit: JoinLine.maximumNameBytes)
        self.name = name.isEmpty ? ConsoleScreen.clean(line.name, limit: JoinLine.maximumNameBytes) : name
        let directory = ConsoleScreen.clean(reply["directory"]?.stringValue ?? "", limit: ConsoleScreen.pathLimit)
        self.directory = directory.isEmpty ? ConsoleScreen.clean(asked, limit: ConsoleScreen.pathLimit) : directory
        files = SharedProject.count(reply["files"])
    }
}

/// A `project/progress` notification: how many of a project's files are on disk.
///
/// Guarantees: every count is between 0 and 2^40, and `written` is at most `files`.
public struct ProjectProgress: Equatable, Sendable {
    public var key: String
    public var name: String
    public var files: Int
    public var written: Int
    public var bytes: Int

    public init(key: String, name: String, files: Int, written: Int, bytes: Int) {
        self.key = key
        self.name = name
        self.files = Self.bounded(files)
        self.written = min(Self.bounded(written), self.files)
        self.bytes = Self.bounded(bytes)
    }

    /// The notification's values; nil when it has no key or no counts.
    public init?(_ params: JSONValue) {
        guard let key = try? ProjectKey.read(params["key"], method: "project/progress"),
              let files = params["files"]?.integerValue, let written = params["written"]?.integerValue else { return nil }
        self.init(key: key, name: ConsoleScreen.clean(params["name"]?.stringValue ?? "", limit: JoinLine.maximumNameBytes),
                  files: Int(clamping: files), written: Int(clamping: written),
                  bytes: Int(clamping: params["bytes"]?.integerValue ?? 0))
    }

    /// Every file of the tree is on disk.
    public var isComplete: Bool { written >= files }

    /// 0 to 100.
    public var percent: Int { files == 0 ? 100 : written * 100 / files }

    static func bounded(_ value: Int) -> Int { min(max(0, value), 1 << 40) }
}

/// The join line of a reply (`project/share`, `project/invite`): bounded before it is parsed,
/// and parsed to make sure it reads back.
enum ReplyJoinLine {
    static func read(_ value: JSONValue?, method: String) throws(ConsoleError) -> JoinLine {
        guard let text = value?.stringValue, text.utf8.count <= JoinLine.maximumCharacters else {
            throw .badReply(method: method, "it has no join line")
        }
        do {
            return try JoinLine(parsing: text)
        } catch {
            throw .badReply(method: method, "its join line does not read back: \(error)")
        }
    }
}

/// A project's key as the daemon gives it (`project-sharing.md`: 16 lowercase hex digits).
enum ProjectKey {
    static func read(_ value: JSONValue?, method: String) throws(ConsoleError) -> String {
        guard let key = value?.stringValue, (1...64).contains(key.utf8.count),
              key.utf8.allSatisfy({ (48...57).contains($0) || (97...122).contains($0) }) else {
            throw .badReply(method: method, "it has no project key of lowercase letters and digits")
        }
        return key
    }
}
