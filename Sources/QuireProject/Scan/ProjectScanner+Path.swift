import Glibc

extension ProjectScanner {
    /// Why the scan would leave out the file at `path` under the folder `root`, walked from the
    /// root one folder at a time without following links and with this scanner's `FolderTrust`:
    /// a link or another user's folder on the way, or a link, special file, another user's file
    /// or a hard-linked file at the path (in a folder others may write in). Nil when nothing is
    /// there yet (an editor's new file) or a regular file of the owner's is, whatever its text:
    /// an editor's `document/open` uses it before making the path a file of the project.
    /// - Complexity: O(path components) system calls; reads no file.
    public func reasonToLeaveOut(_ path: ProjectPath, root: String) -> Reason? {
        var folder: Int32
        switch Descriptors.openRoot(root, trust: trust) {
        case .success(let fd): folder = fd
        case .failure(let error): return .unreadable(error.description)
        }
        defer { close(folder) }
        for component in path.components.dropLast() {
            let name = String(component)
            guard let info = Descriptors.linkStatus(name, in: folder) else { return nil }   // made when saved
            if Descriptors.isLink(info) { return .symbolicLink }
            guard Descriptors.isFolder(info) else { return .notRegularFile }
            let othersMayWrite = trust.othersMayWrite(fd: folder)
            if let reason = trust.reasonToRefuse(info, inOpenFolder: othersMayWrite) { return reason }
            switch Descriptors.openFolder(name, in: folder) {
            case .success(let next):
                close(folder)
                folder = next
                if let opened = Descriptors.status(next), let reason = trust.reasonToRefuse(opened, inOpenFolder: othersMayWrite) { return reason }
            case .failure(let error): return .unreadable(error.description)
            }
        }
        guard let info = Descriptors.linkStatus(String(path.name), in: folder) else { return nil }
        if Descriptors.isLink(info) { return .symbolicLink }
        guard Descriptors.isRegular(info) else { return .notRegularFile }
        return trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: folder))
    }
}
