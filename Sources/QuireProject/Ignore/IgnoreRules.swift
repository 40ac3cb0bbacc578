/// One line of a `.gitignore` or `.quireignore`, parsed as git parses it (`dir.c`): `!` negates,
/// a trailing `/` matches folders only, a pattern with no other `/` matches a name at any depth,
/// one with a `/` (leading or inside) matches the path relative to the file's folder; a `\r`
/// ending the line is dropped (files written with CRLF line ends work as in git).
struct IgnorePattern: Sendable {
    let program: GlobProgram
    let negated: Bool
    let directoryOnly: Bool
    let matchesNameOnly: Bool

    /// The pattern on `line` (a line without its `\n`), or nil for a blank or comment line.
    init?(line: ArraySlice<UInt8>) {
        var bytes = Array(line)
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }  // git drops a CR before the line end
        guard let first = bytes.first, first != UInt8(ascii: "#") else { return nil }
        Self.trimTrailingSpaces(&bytes)
        var negated = false
        if bytes.first == UInt8(ascii: "!") {
            negated = true
            bytes.removeFirst()
        }
        var directoryOnly = false
        if bytes.last == UInt8(ascii: "/") {
            directoryOnly = true
            bytes.removeLast()
        }
        let matchesNameOnly = !bytes.contains(UInt8(ascii: "/"))
        if bytes.first == UInt8(ascii: "/") { bytes.removeFirst() }
        self.program = GlobProgram(bytes)
        self.negated = negated
        self.directoryOnly = directoryOnly
        self.matchesNameOnly = matchesNameOnly
    }

    /// Trailing spaces go unless escaped with `\` (git's `trim_trailing_spaces`; tabs stay).
    private static func trimTrailingSpaces(_ bytes: inout [UInt8]) {
        var lastSpace: Int?
        var i = 0
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: " "):
                if lastSpace == nil { lastSpace = i }
            case UInt8(ascii: "\\"):
                i += 1
                if i >= bytes.count { return }
                lastSpace = nil
            default:
                lastSpace = nil
            }
            i += 1
        }
        if let lastSpace { bytes.removeSubrange(lastSpace...) }
    }

    /// Whether the pattern matches `path` (relative to the ignore file's folder) named `name`.
    func matches(path: ArraySlice<UInt8>, name: ArraySlice<UInt8>, isDirectory: Bool) -> Bool {
        if directoryOnly && !isDirectory { return false }
        return program.matches(matchesNameOnly ? name : path)
    }
}

/// The patterns of one ignore file, in file order.
public struct IgnoreFile: Sendable {
    /// Lines past this are refused (a generated ignore file of this size is a mistake).
    public static let maximumPatterns = 20_000
    /// A longer line is refused: matching costs pattern length × path length per path.
    public static let maximumLineBytes = 4096
    let patterns: [IgnorePattern]

    /// The patterns in `contents` (the file's bytes); throws past `maximumPatterns` lines or on
    /// a line longer than `maximumLineBytes`.
    public init(contents: [UInt8]) throws(ProjectScanner.Failure) {
        var patterns: [IgnorePattern] = []
        var count = 0
        for line in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            count += 1
            guard count <= Self.maximumPatterns else {
                throw .ignoreFileTooLarge("has more than \(Self.maximumPatterns) lines")
            }
            guard line.count <= Self.maximumLineBytes else {
                throw .ignoreFileTooLarge("has a line longer than \(Self.maximumLineBytes) bytes (line \(count))")
            }
            if let pattern = IgnorePattern(line: line) { patterns.append(pattern) }
        }
        self.patterns = patterns
    }

    /// The verdict of the last pattern matching, nil when none does.
    func verdict(path: ArraySlice<UInt8>, name: ArraySlice<UInt8>, isDirectory: Bool) -> Bool? {
        for pattern in patterns.reversed() where pattern.matches(path: path, name: name, isDirectory: isDirectory) {
            return !pattern.negated
        }
        return nil
    }
}

/// The ignore files in force in one folder of a scan: the folder's own and those of every folder
/// above it up to the root, deepest first in precedence (as git does); at each level the
/// `.quireignore` comes after the `.gitignore`, so it overrides it there.
///
/// Guarantee: a path's verdict is the last matching pattern of the deepest level with a match;
/// no match means not ignored.
public struct IgnoreRules: Sendable {
    struct Level: Sendable {
        /// The folder's path relative to the root, with a trailing `/` ("" for the root).
        var base: [UInt8]
        var files: [IgnoreFile]
    }

    private(set) var levels: [Level] = []

    public init() {}

    /// These rules with the ignore files of the folder `folder` (relative, "" for the root) added.
    public func adding(folder: String, files: [IgnoreFile]) -> IgnoreRules {
        guard !files.isEmpty else { return self }
        var copy = self
        copy.levels.append(Level(base: folder.isEmpty ? [] : Array(folder.utf8) + [UInt8(ascii: "/")], files: files))
        return copy
    }

    /// Whether `path` (relative to the root) is ignored by these rules.
    public func isIgnored(_ path: String, isDirectory: Bool) -> Bool {
        let bytes = Array(path.utf8)
        let nameStart = (bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 }) ?? 0
        let name = bytes[nameStart...]
        for level in levels.reversed() {
            guard bytes.starts(with: level.base) else { continue }
            let relative = bytes[level.base.count...]
            for file in level.files.reversed() {
                if let verdict = file.verdict(path: relative, name: name, isDirectory: isDirectory) { return verdict }
            }
        }
        return false
    }
}
