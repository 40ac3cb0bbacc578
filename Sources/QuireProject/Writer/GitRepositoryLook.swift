/// What makes git take a folder for a repository of its own, as git's `is_git_directory` tests
/// it: a `HEAD` file that names a branch (`ref: refs/...`) or a commit (40 hex digits or more),
/// beside `objects/` and `refs/` folders. Of the three, only the `HEAD` file's text is
/// particular: any partner could make the two folders with a file in each. Git reads such a
/// folder's `config` whenever it runs there (a person's `git status`, or a shell prompt that runs
/// git at every `cd`), and a `config` can name commands git runs (`core.fsmonitor`), so a
/// partner's files must never make one on this machine's disk, nor change one already there.
///
/// Guarantees: pure; looks at no more than git does (the first 255 bytes of `HEAD`).
public enum GitRepositoryLook {
    /// Whether `name` is `HEAD` in any ASCII letter case (a folder on a case-insensitive
    /// filesystem finds `head` as `HEAD`).
    public static func isHeadName(_ name: Substring) -> Bool {
        name.utf8.count == 4 && name.utf8.lazy.map { $0 | 0x20 }.elementsEqual("head".utf8)
    }

    /// Whether git would take `text`, a `HEAD` file's, for a repository's HEAD: `ref:`, white
    /// space (git's: space, tab, line feed, carriage return), then `refs/`; or a commit's name,
    /// 40 hex digits first.
    public static func looksLikeHead(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(255))
        let ref = Array("ref:".utf8)
        if bytes.starts(with: ref) {
            let rest = bytes.dropFirst(ref.count).drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            return rest.starts(with: "refs/".utf8)
        }
        return bytes.count >= 40 && bytes.prefix(40).allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20)
        }
    }
}
