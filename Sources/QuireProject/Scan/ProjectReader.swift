import Glibc

/// Reads one shared file's text, by its project path, from a project folder.
///
/// Guarantees: the walk from the root opens each folder relative to the previous one and refuses
/// symbolic links at every step, so no path reads anything outside the root; only a regular file
/// of at most `maximumBytes` is read; the whole text must be UTF-8 (a file that was text in its
/// first block but not further on is refused, not mangled with replacement characters); in a
/// folder others may write in, what `FolderTrust` refuses (another user's file or folder, a file
/// with more than one hard link) is refused as opened, so a file swapped in after the scan is not
/// read either.
public enum ProjectReader {
    /// Why a file cannot be read as shared text.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The text of `path` under the folder `root`.
    public static func text(of path: ProjectPath, root: String, maximumBytes: Int = ProjectScanner.Limits().fileBytes,
                            trust: FolderTrust = FolderTrust()) throws(Failure) -> String {
        let shown = path.string.debugDescription
        var folder: Int32
        switch Descriptors.openRoot(root, trust: trust) {
        case .success(let fd): folder = fd
        case .failure(let error): throw Failure(description: "cannot open the project folder: \(error.description)")
        }
        defer { close(folder) }
        let components = path.components
        for component in components.dropLast() {
            switch Descriptors.openFolder(String(component), in: folder) {
            case .success(let next):
                let refused = Descriptors.status(next).flatMap { trust.reasonToRefuse($0, inOpenFolder: trust.othersMayWrite(fd: folder)) }
                close(folder)
                folder = next
                if let refused { throw Failure(description: "cannot read \(shown): \(component.debugDescription) is \(refused)") }
            case .failure(let error):
                let why = error.code == ELOOP || error.code == ENOTDIR ? "a folder on its path is a symbolic link or a file" : error.description
                throw Failure(description: "cannot read \(shown): \(why)")
            }
        }
        let fd: Int32
        switch Descriptors.openFile(String(path.name), in: folder) {
        case .success(let opened): fd = opened
        case .failure(let error):
            let why = error.code == ELOOP ? "it is a symbolic link" : error.description
            throw Failure(description: "cannot read \(shown): \(why)")
        }
        defer { close(fd) }
        guard let info = Descriptors.status(fd), Descriptors.isRegular(info) else {
            throw Failure(description: "cannot read \(shown): it is not a regular file")
        }
        if let refused = trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: folder)) {
            throw Failure(description: "cannot read \(shown): \(refused)")
        }
        guard Int(info.st_size) <= maximumBytes else {
            throw Failure(description: "\(shown) is larger than \(maximumBytes) bytes")
        }
        switch Descriptors.read(fd, upTo: Int(info.st_size) + 1) {
        case .failure(let error): throw Failure(description: "cannot read \(shown): \(error.description)")
        case .success(let bytes):
            guard bytes.count <= maximumBytes else { throw Failure(description: "\(shown) grew past \(maximumBytes) bytes while being read") }
            if let nul = bytes.firstIndex(of: 0) { throw Failure(description: "\(shown) is binary (a NUL byte at offset \(nul))") }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw Failure(description: "\(shown) is not UTF-8 text")
            }
            return text
        }
    }
}
