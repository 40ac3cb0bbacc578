import Glibc
import QuireProject

// The folder watch and a disk pass's own writes: what a pass wrote is not read back by a scan
// of the whole tree. Its temporary files and their renames into place are told apart by the
// watch (`ProjectWatcher`); the folders it made are read once here, when they are first
// watched, since what was put in them before then made no event.
extension ProjectService {
    /// Watches the folders of what a pass wrote (`written`: each file as synced) or moved
    /// (`moved`: where each went). The folders watched from now on are each read once: when every
    /// one holds only files the pass wrote, unchanged since, files it moved there, and other such
    /// folders, their creation is the pass's own (`ProjectWatcher.expectMade`); otherwise
    /// something else is there, and the project is scanned at its next round.
    /// - Complexity: O(entries of the newly watched folders).
    func watchWritten(_ folders: Set<String>, written: [ProjectPath: DiskProject.WrittenFile], moved: Set<ProjectPath> = [],
                      in project: SharedProject) {
        guard let watcher = project.watcher else { return }
        let added = watcher.watch(folders: folders)
        guard !added.isEmpty else { return }
        let addedFolders = Set(added)
        var expected: [String: [String: DiskProject.WrittenFile?]] = [:]
        for path in moved { expected[path.ancestors.last ?? "", default: [:]][String(path.name)] = .some(nil) }
        for (path, file) in written { expected[path.ancestors.last ?? "", default: [:]][String(path.name)] = file }
        for folder in added where !holdsOnly(folder, files: expected[folder] ?? [:], folders: addedFolders, in: project) {
            project.needsScan = true
            return
        }
        watcher.expectMade(added)
    }

    /// Whether `folder` holds only `files` (by name, each as written; a file moved there, nil:
    /// any regular file) and folders of `folders`.
    private func holdsOnly(_ folder: String, files: [String: DiskProject.WrittenFile?], folders: Set<String>, in project: SharedProject) -> Bool {
        let path = folder.isEmpty ? project.root : project.root + "/" + folder
        guard let stream = opendir(path) else { return false }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            var raw = entry.pointee.d_name
            let name = withUnsafeBytes(of: &raw) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            if let file = files[name] {
                var info = stat()
                guard lstat(path + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
                if let file, DiskProject.WrittenFile(info) != file { return false }
            } else if !folders.contains(folder.isEmpty ? name : folder + "/" + name) {
                return false
            }
        }
        return true
    }
}

extension SharedProject.Stamp {
    /// The stamp of a file as a disk pass wrote it.
    init(_ written: DiskProject.WrittenFile) {
        self.init(size: written.size, modified: written.modified, modifiedNanoseconds: written.modifiedNanoseconds, inode: written.inode)
    }
}
