import Glibc

extension ProjectScanner {
    /// Whether the scan would leave `path` (under the folder `root`) out by the ignore rules:
    /// it lies in `.git`, or the `.gitignore` and `.quireignore` files on its way, read as the
    /// scan reads them (each folder opened from the root without following links, no ignore file
    /// that is a link or a special file, none that `FolderTrust` refuses in a folder others may
    /// write in, none over `limits.ignoreFileBytes`), rule it or a folder on its way out. An
    /// editor's `document/open` asks before making a path a file of the project, so a rule
    /// another user planted (`!.env`) brings no ignored file of the owner's in there either.
    /// - Complexity: O(path components) folder opens, reading at most two ignore files each.
    public func isIgnored(_ path: ProjectPath, root: String) -> Bool {
        if path.components.contains(where: { $0 == ".git" }) { return true }
        guard case .success(var folder) = Descriptors.openRoot(root, trust: trust) else { return false }
        defer { close(folder) }
        let walk = Walk(limits: limits, trust: trust)
        var rules = IgnoreRules()
        let folders = [""] + path.ancestors
        for (index, relative) in folders.enumerated() {
            if index > 0 {
                if rules.isIgnored(relative, isDirectory: true) { return true }
                // A folder not there yet (an editor's new file) has no ignore files of its own.
                guard case .success(let next) = Descriptors.openFolder(String(path.components[index - 1]), in: folder) else { break }
                close(folder)
                folder = next
            }
            var files: [IgnoreFile] = []
            for name in Self.ignoreFileNames {
                if let file = try? walk.readIgnoreFile(name, in: folder, folder: relative) { files.append(file) }
            }
            rules = rules.adding(folder: relative, files: files)
        }
        return rules.isIgnored(path.string, isDirectory: false)
    }
}
