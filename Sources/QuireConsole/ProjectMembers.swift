import Glibc
import JSON
import QuireDaemon
import QuireProject

/// A project the daemon shares or follows, as `project/list` answers it, checked and cleaned:
/// how `quire invite`, `quire members`, `quire role` and `quire revoke` find the project of a
/// folder.
///
/// Guarantees: `key` is one `ProjectKey.read` accepts (it is sent back); `root` and `file` are
/// the daemon's text, at most 4096 bytes, used only to compare paths; `name` and `shownRoot` are
/// cleaned.
public struct ListedProject: Equatable, Sendable {
    public var key: String
    public var name: String
    public var root: String
    /// The one file of a project of one file (a file shared by itself), absolute; nil for a folder.
    public var file: String?
    /// What is shared, cleaned for showing: the file, or the folder.
    public var shownRoot: String

    public init(key: String, name: String, root: String, file: String? = nil) {
        self.key = key
        self.name = name
        self.root = root
        self.file = file
        shownRoot = ConsoleScreen.clean(file ?? root, limit: ConsoleScreen.pathLimit)
    }

    /// The projects of a `project/list` reply (at most 1024 are read); entries without a key or
    /// a root are left out.
    public static func list(reply: JSONValue) throws(ConsoleError) -> [ListedProject] {
        guard let entries = reply["projects"]?.arrayValue else { throw .badReply(method: "project/list", "it has no list of projects") }
        return entries.prefix(1024).compactMap { entry in
            guard let key = try? ProjectKey.read(entry["key"], method: "project/list"),
                  let root = entry["root"]?.stringValue, root.hasPrefix("/"), root.utf8.count <= 4096 else { return nil }
            let file = entry["file"]?.stringValue.flatMap { $0.hasPrefix(root + "/") && $0.utf8.count <= 4096 ? $0 : nil }
            return ListedProject(key: key, name: ConsoleScreen.clean(entry["name"]?.stringValue ?? "", limit: 100), root: root, file: file)
        }
    }

    /// The project of `folder` (absolute and resolved; a file's path names a file shared by
    /// itself): the project of one file that is it; else the folder project whose root is it or
    /// holds it (the deepest such root when projects nest); else, for a folder, the one file
    /// shared by itself in it (when there is only one). Throws a message naming the projects
    /// there are.
    public static func holding(_ folder: String, in projects: [ListedProject]) throws(ConsoleArgumentError) -> ListedProject {
        if let single = projects.first(where: { $0.file == folder }) { return single }
        let folders = projects.filter { $0.file == nil }
        let holding = folders.filter { folder == $0.root || folder.hasPrefix($0.root == "/" ? "/" : $0.root + "/") }
        if let deepest = holding.max(by: { $0.root.utf8.count < $1.root.utf8.count }) { return deepest }
        let filesHere = projects.filter { $0.file != nil && $0.root == folder }
        if filesHere.count == 1, let single = filesHere.first { return single }
        if filesHere.count > 1 {
            let listed = filesHere.prefix(5).map { quotedName($0) }.joined(separator: ", ")
            throw ConsoleArgumentError("\(ConsoleScreen.clean(folder, limit: ConsoleScreen.pathLimit)) is not shared itself; files in it are shared "
                + "by themselves: \(listed): name the file")
        }
        let shownFolder = ConsoleScreen.clean(folder, limit: ConsoleScreen.pathLimit)
        guard !projects.isEmpty else {
            throw ConsoleArgumentError("\(shownFolder) is not a shared project: the quire running shares and follows none "
                + "(share one with `quire share`, or join one with `quire join`)")
        }
        let listed = projects.prefix(5).map { quotedName($0) }.joined(separator: ", ")
        throw ConsoleArgumentError("\(shownFolder) is in no project the quire running shares or follows; it has \(listed)"
            + (projects.count > 5 ? " and \(projects.count - 5) more" : "") + ": run this in one of them, or name its folder (or, for a file shared by itself, the file)")
    }

    private static func quotedName(_ project: ListedProject) -> String {
        "\(ConsoleScreen.quoted(project.name)) (\(project.shownRoot))"
    }
}

/// A member of a project as `project/members`, `project/role` and `project/revoke` answer it,
/// cleaned for the terminal.
///
/// Guarantees: `fingerprint` at most 80 characters and `name` at most 64, both cleaned; `role`
/// is `read`, `write`, `owner` or nil (removed: any other value reads as removed).
public struct ProjectMember: Equatable, Sendable {
    public var fingerprint: String
    public var name: String
    public var role: String?
    public var online: Bool
    public var isYou: Bool

    public init(fingerprint: String, name: String, role: String?, online: Bool, isYou: Bool) {
        self.fingerprint = ConsoleScreen.clean(fingerprint, limit: 80)
        self.name = ConsoleScreen.clean(name, limit: DisplayText.maximumNameLength)
        self.role = role.flatMap { MemberArguments.roles.contains($0) ? $0 : nil }
        self.online = online
        self.isYou = isYou
    }

    /// One member object; throws when it has no fingerprint.
    public init(json: JSONValue, method: String) throws(ConsoleError) {
        guard let fingerprint = json["fingerprint"]?.stringValue, !fingerprint.isEmpty else {
            throw .badReply(method: method, "a member has no key fingerprint")
        }
        self.init(fingerprint: fingerprint, name: json["name"]?.stringValue ?? "", role: json["role"]?.stringValue,
                  online: json["online"] == .bool(true), isYou: json["you"] == .bool(true))
    }

    /// The members of a `project/members` reply (at most 1024 are read, as a roster holds).
    public static func list(reply: JSONValue) throws(ConsoleError) -> [ProjectMember] {
        guard let entries = reply["members"]?.arrayValue else { throw .badReply(method: "project/members", "it has no list of members") }
        var members: [ProjectMember] = []
        for entry in entries.prefix(1024) { members.append(try ProjectMember(json: entry, method: "project/members")) }
        return members
    }

    /// How a line names the member: `bob (3f1c-0a9e-...)`, or the fingerprint alone.
    public var shown: String { name.isEmpty ? fingerprint : "\(name) (\(fingerprint))" }
}

/// An invitation as `project/invite` answers it: the line, checked to read back, and what it allows.
public struct InvitationLine: Equatable, Sendable {
    public var line: String
    public var role: String
    public var once: Bool
    /// Seconds since 1970 after which it can no longer be used; nil: never.
    public var expires: Int?

    public init(reply: JSONValue) throws(ConsoleError) {
        let method = "project/invite"
        line = try ReplyJoinLine.read(reply["line"], method: method).encoded
        guard let role = reply["role"]?.stringValue, MemberArguments.roles.contains(role) else {
            throw .badReply(method: method, "it names no role")
        }
        self.role = role
        once = reply["once"] == .bool(true)
        expires = reply["expires"]?.integerValue.map { Int(clamping: $0) }
    }
}
