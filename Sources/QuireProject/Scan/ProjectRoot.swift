import Glibc

/// Finds the folder `quire share` shares when given none: the nearest folder, from the current
/// one up, that holds a `.git` (a folder, or the file a worktree or submodule has) or a
/// `.quire-root` marker.
public enum ProjectRoot {
    /// The markers that make a folder a project's root, in the order they are looked for.
    public static let markers = [".quire-root", ".git"]

    /// The project root at or above `folder` (an absolute path, as `getcwd` gives it; empty
    /// components are skipped), nil when no folder up to `/`
    /// has a marker. Looks at most `ProjectPath.maximumComponents * 4` folders up.
    public static func find(from folder: String) -> String? {
        guard folder.hasPrefix("/") else { return nil }
        var components = folder.unicodeScalars.split(separator: "/").map { String(String.UnicodeScalarView($0)) }
        for _ in 0...(ProjectPath.maximumComponents * 4) {
            let candidate = "/" + components.joined(separator: "/")
            for marker in markers {
                var info = stat()
                if lstat(candidate == "/" ? "/" + marker : candidate + "/" + marker, &info) == 0 { return candidate }
            }
            guard !components.isEmpty else { return nil }
            components.removeLast()
        }
        return nil
    }
}
