/// The folders in which version-control systems other than git keep a repository's own files,
/// among them configuration that names commands they run: Mercurial's hooks (`.hg/hgrc`),
/// Jujutsu's pager and editors (`.jj/repo/config.toml`), Darcs's posthooks
/// (`_darcs/prefs/defaults`), Pijul's hooks (`.pijul/config`). A disk pass writes nothing into
/// them (`ProjectWriter`, rule 5), as a partner's file must not change what these tools run.
/// `.git` itself is refused in every project path (`ProjectPath`).
///
/// Guarantees: pure; a name matches in any ASCII letter case (a case-insensitive filesystem
/// finds `.HG` as `.hg`).
public enum RepositoryFolders {
    public static let names = [".hg", ".jj", ".svn", ".bzr", "_darcs", ".pijul"]

    /// Whether a scan leaves a folder named `name` out as a repository's own: `.git`, or one of
    /// `names` (`ProjectScanner`, `IgnoreLookup`).
    public static func isLeftOutByScans(_ name: Substring) -> Bool {
        name == ".git" || isMetadataName(name)
    }

    /// Whether `name` is one of `names`, in any ASCII letter case.
    public static func isMetadataName(_ name: Substring) -> Bool {
        names.contains { candidate in
            name.utf8.count == candidate.utf8.count
                && name.utf8.lazy.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }.elementsEqual(candidate.utf8)
        }
    }
}
