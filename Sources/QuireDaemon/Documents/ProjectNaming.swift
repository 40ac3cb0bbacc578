import Foundation

/// The one naming rule for files (protocol/README.md, *Naming rule for files*), applied by the
/// daemon so that every client names a file the same way: a file is named by its path relative
/// to its project root, the nearest directory above it holding `.git` (a directory or a file) or
/// `.quire-root`, else by its own name, with `/` separators.
///
/// Guarantees: looks at most `maximumDepth` directories up; reads nothing but whether those two
/// entries exist; never follows the path anywhere but upwards, lexically.
enum ProjectNaming {
    static let maximumDepth = 256

    /// The document name of the file at absolute path `path`.
    static func documentName(ofFile path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let fileName = components.last else { return path }
        let directories = components.dropLast()
        let lowest = max(0, directories.count - maximumDepth)
        for depth in stride(from: directories.count, through: lowest, by: -1) {
            let directory = "/" + directories.prefix(depth).joined(separator: "/")
            if isProjectRoot(directory) {
                return components.dropFirst(depth).joined(separator: "/")
            }
        }
        return fileName
    }

    /// Whether `directory` holds `.git` or `.quire-root`.
    static func isProjectRoot(_ directory: String) -> Bool {
        let base = directory.hasSuffix("/") ? directory : directory + "/"
        return FileManager.default.fileExists(atPath: base + ".git") || FileManager.default.fileExists(atPath: base + ".quire-root")
    }
}
