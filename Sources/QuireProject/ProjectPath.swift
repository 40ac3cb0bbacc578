/// A file's place in a shared project: a path relative to the project's root, `/`-separated.
///
/// Guarantees (checked by `init`, so a value that exists keeps them, whatever peer sent it):
/// 1. 1 to `maximumComponents` components, none empty, none `.` or `..`: the path can never
///    name the root itself or anything outside it;
/// 2. no leading or trailing `/`, no NUL and no control character (U+0000–U+001F, U+007F), so
///    it can be shown in a terminal and written as a line;
/// 3. at most `maximumUTF8Bytes` bytes of UTF-8, each component at most `maximumComponentBytes`
///    (the Linux limit for one name);
/// 4. paths are equal, hashed and ordered by their bytes, as the file system tells names apart;
/// 5. no component is `.git` in any letter case (`isGitFolderName`): a project's files never
///    include a repository's own folder, at the root or in any subfolder, so nothing a peer
///    sends can be written there (hooks and `config` run code on the host; `.GIT` is the same
///    folder on a case-insensitive file system).
public struct ProjectPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    public static let maximumUTF8Bytes = 1024
    public static let maximumComponentBytes = 255
    public static let maximumComponents = 64

    /// The path as `a/b/c`.
    public let string: String

    /// Why a path is refused.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// `text` as a project path, or why it cannot be one.
    public init(_ text: String) throws(Refusal) {
        let bytes = text.utf8
        guard bytes.count <= Self.maximumUTF8Bytes else {
            throw Refusal(description: "a path in a project has at most \(Self.maximumUTF8Bytes) bytes, this one has \(bytes.count): \(Self.shown(text))")
        }
        guard !text.isEmpty else { throw Refusal(description: "a path in a project cannot be empty") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw Refusal(description: "a path in a project cannot hold control characters: \(Self.shown(text))")
        }
        let components = Self.split(text)
        guard components.count <= Self.maximumComponents else {
            throw Refusal(description: "a path in a project has at most \(Self.maximumComponents) components: \(Self.shown(text))")
        }
        for component in components {
            if component.isEmpty {
                throw Refusal(description: "a path in a project is relative and has no empty component (no leading, trailing or double `/`): \(Self.shown(text))")
            }
            if component == "." || component == ".." {
                throw Refusal(description: "a path in a project cannot have a `.` or `..` component: \(Self.shown(text))")
            }
            if Self.isGitFolderName(component) {
                throw Refusal(description: "a path in a project cannot go into a `.git` folder: \(Self.shown(text))")
            }
            if component.utf8.count > Self.maximumComponentBytes {
                throw Refusal(description: "a name in a project path has at most \(Self.maximumComponentBytes) bytes: \(Self.shown(text))")
            }
        }
        string = text
    }

    /// Whether `name` is `.git` in any ASCII letter case.
    public static func isGitFolderName(_ name: Substring) -> Bool {
        name.utf8.count == 4 && name.utf8.lazy.map { $0 | 0x20 }.elementsEqual(".git".utf8.lazy.map { $0 | 0x20 })
    }

    /// The components, `["a", "b", "c"]` for `a/b/c`.
    public var components: [Substring] { Self.split(string) }

    /// `text` split at every `/` scalar. (Splitting `String` itself would go by characters, and
    /// a `/` followed by a combining mark is one character: it would not be split there.)
    static func split(_ text: String) -> [Substring] {
        text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// The last component.
    public var name: Substring { components.last ?? Substring(string) }

    /// The folders this path is under, nearest last: `["a", "a/b"]` for `a/b/c`.
    public var ancestors: [String] {
        var result: [String] = []
        let scalars = string.unicodeScalars
        for index in scalars.indices where scalars[index] == "/" {
            result.append(String(scalars[..<index]))
        }
        return result
    }

    /// Whether this path is `folder` or under it (`folder` given as `a/b`, no trailing slash).
    public func isInside(folder: String) -> Bool {
        let path = string.utf8, prefix = folder.utf8
        guard path.starts(with: prefix) else { return false }
        return path.count == prefix.count || path.dropFirst(prefix.count).first == UInt8(ascii: "/")
    }

    public static func < (lhs: ProjectPath, rhs: ProjectPath) -> Bool { lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8) }

    /// Byte equality, as the file system compares names (`String`'s `==` would take `é` and
    /// `e` + U+0301 for one name, which are two files on Linux).
    public static func == (lhs: ProjectPath, rhs: ProjectPath) -> Bool { lhs.string.utf8.elementsEqual(rhs.string.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in string.utf8 { hasher.combine(byte) }
    }

    public var description: String { string }

    /// `text` cut to 200 characters and quoted, safe to show (control characters escaped).
    static func shown(_ text: String) -> String {
        String(text.prefix(200)).debugDescription
    }
}

extension ProjectPath: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
