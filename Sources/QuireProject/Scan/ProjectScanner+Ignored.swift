import Glibc

extension ProjectScanner {
    /// Whether the scan would leave `path` (under the folder `root`) out by the ignore rules:
    /// it lies in `.git` or another system's repository folder (`RepositoryFolders`), or the
    /// `.gitignore` and `.quireignore` files on its way, read as the
    /// scan reads them (each folder opened from the root without following links, no ignore file
    /// that is a link or a special file, none that `FolderTrust` refuses in a folder others may
    /// write in, none over `limits.ignoreFileBytes`), rule it or a folder on its way out. An
    /// editor's `document/open` asks before making a path a file of the project, so a rule
    /// another user planted (`!.env`) brings no ignored file of the owner's in there either.
    /// - Complexity: O(path components) folder opens, reading at most two ignore files each.
    public func isIgnored(_ path: ProjectPath, root: String) -> Bool {
        var lookup = IgnoreLookup(scanner: self, root: root)
        return lookup.isIgnored(path)
    }
}

/// `ProjectScanner.isIgnored` for many paths of one folder in a row (a writer's pass over a
/// joined project's thousands of files): each folder's ignore files are read once, and a path
/// whose folder was seen needs no walk at all. It answers what `isIgnored` would have answered
/// when the lookup first saw that folder, so it is for one pass, not to keep.
public struct IgnoreLookup {
    private let scanner: ProjectScanner
    private let root: String
    /// What is known of a folder (relative to the root, "" for the root) once walked to.
    private enum Folder {
        /// It or a folder on its way is ignored: so is everything in it.
        case ignored
        /// The rules of every ignore file down to it (a folder not there has none of its own).
        case rules(IgnoreRules)
    }
    private var folders: [String: Folder] = [:]

    public init(scanner: ProjectScanner, root: String) {
        self.scanner = scanner
        self.root = root
    }

    /// Whether `path` is left out (see `ProjectScanner.isIgnored`).
    /// - Complexity: O(1) when its folder was walked to before; else as `isIgnored`.
    public mutating func isIgnored(_ path: ProjectPath) -> Bool {
        if path.components.contains(where: RepositoryFolders.isLeftOutByScans) { return true }
        let folders = [""] + path.ancestors
        guard let last = folders.last else { return false }
        if self.folders[last] == nil { walk(to: folders, of: path) }
        switch self.folders[last] {
        case .ignored: return true
        case .rules(let rules): return rules.isIgnored(path.string, isDirectory: false)
        case nil: return false   // the root could not be opened
        }
    }

    /// Walks from the root to the last of `chain` (the folders of `path`), reading the ignore
    /// files of each folder it opens, and records what it finds for every folder of the chain.
    private mutating func walk(to chain: [String], of path: ProjectPath) {
        guard case .success(var folder) = Descriptors.openRoot(root, trust: scanner.trust) else { return }
        defer { close(folder) }
        let walk = ProjectScanner.Walk(limits: scanner.limits, trust: scanner.trust)
        var rules = IgnoreRules()
        for (index, relative) in chain.enumerated() {
            if index > 0 {
                if rules.isIgnored(relative, isDirectory: true) {
                    for deeper in chain[index...] { folders[deeper] = .ignored }
                    return
                }
                // A folder not there yet (an editor's new file, a joined file not written yet)
                // has no ignore files of its own, nor has any folder in it.
                guard case .success(let next) = Descriptors.openFolder(String(path.components[index - 1]), in: folder) else {
                    for deeper in chain[index...] { folders[deeper] = .rules(rules) }
                    return
                }
                close(folder)
                folder = next
            }
            var files: [IgnoreFile] = []
            for name in ProjectScanner.ignoreFileNames {
                if let file = try? walk.readIgnoreFile(name, in: folder, folder: relative) { files.append(file) }
            }
            rules = rules.adding(folder: relative, files: files)
            folders[relative] = .rules(rules)
        }
    }
}
