import Glibc

/// A project folder on disk, as the writer reads and changes it.
///
/// Guarantees: every path is walked from the root one folder at a time, each opened relative to
/// the previous with `O_NOFOLLOW`, so no read or write goes through a symbolic link or outside the
/// root; a write goes to a new temporary file in the target's folder (`O_EXCL`), is synced, and
/// is renamed over the target, so a reader sees the old text or the new, never a mix, and a crash
/// leaves at most a `.quire-write-*` file behind; an existing file keeps its permissions (a new
/// file and folder get 0644 and 0755 less the umask); a
/// rename never replaces an existing file; a removal only removes a file, and a folder goes only
/// when it is empty. In a folder others may write in (`FolderTrust`), another user's folder is
/// never walked into (nothing is written, moved or removed under it), and another user's file or
/// a file with more than one hard link reads as `.other` (the writer holds, never replaces it);
/// a replaced file keeps its permission bits only when it is the owner's, and never set-user or
/// set-group bits.
public struct DiskProject: ProjectDisk, Sendable {
    public let root: String
    /// Whose files and folders are taken in folders others may write in.
    public var trust = FolderTrust()
    /// Files larger than this are reported as `.file(nil)` (not compared as text).
    public var maximumTextBytes = ProjectScanner.Limits().fileBytes
    /// Told each step taken to make writes durable, in order (tests check it).
    var observeDurability: (@Sendable (DurabilityStep) -> Void)?

    /// Why a step on disk failed.
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    public init(root: String) {
        self.root = root
    }

    // MARK: Reading

    public func entry(at path: ProjectPath) -> DiskEntry {
        guard case .success(let folder) = openParent(of: path, creating: false) else {
            return parentEntry(of: path)
        }
        defer { close(folder) }
        let name = String(path.name)
        guard let info = Descriptors.linkStatus(name, in: folder) else { return .absent }
        if Descriptors.isLink(info) { return .symbolicLink }
        if Descriptors.isFolder(info) { return .folder }
        guard Descriptors.isRegular(info) else { return .other }
        let othersMayWrite = trust.othersMayWrite(fd: folder)
        if trust.reasonToRefuse(info, inOpenFolder: othersMayWrite) != nil { return .other }
        guard case .success(let fd) = Descriptors.openFile(name, in: folder) else { return .file(nil) }
        defer { close(fd) }
        guard let status = Descriptors.status(fd), Descriptors.isRegular(status) else { return .other }
        if trust.reasonToRefuse(status, inOpenFolder: othersMayWrite) != nil { return .other }
        guard Int(status.st_size) <= maximumTextBytes,
              case .success(let bytes) = Descriptors.read(fd, upTo: Int(status.st_size) + 1), !bytes.contains(0) else { return .file(nil) }
        return .file(String(validating: bytes, as: UTF8.self))
    }

    /// What stands in the way when the folders of `path` cannot be opened: absent, or a link or
    /// file on the way (reported as `.symbolicLink` / `.other`, enough for the writer to hold).
    private func parentEntry(of path: ProjectPath) -> DiskEntry {
        guard case .success(var folder) = Descriptors.openRoot(root, trust: trust) else { return .absent }
        defer { close(folder) }
        for component in path.components.dropLast() {
            let name = String(component)
            guard let info = Descriptors.linkStatus(name, in: folder) else { return .absent }
            if Descriptors.isLink(info) { return .symbolicLink }
            guard Descriptors.isFolder(info), trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: folder)) == nil,
                  case .success(let next) = Descriptors.openFolder(name, in: folder) else { return .other }
            close(folder)
            folder = next
        }
        return .absent
    }

    // MARK: Changing

    /// Carries out `actions` in order; stops at the first that fails (the caller rescans).
    /// Consecutive writes go together, up to `writesTogether` at a time: each is written under
    /// its temporary name and its writeback started, then all are made durable, then renamed
    /// into place in order, so each file is whole before its name shows it. A pass of at least
    /// `syncsFilesystemFrom` writes (a joined project's thousands of new files) makes each
    /// group durable with one `syncfs` per filesystem instead of one `fsync` per file
    /// (`FilesystemSync`), and its renames and new folders with one more at the end; a smaller
    /// pass syncs each file, then each folder it renamed into, once. Either way, when `perform`
    /// returns, every file it wrote and every name it gave is durable, so what the caller then
    /// records as written is on disk after a crash.
    /// When one of them fails, the writes of its group not yet renamed are dropped too (their
    /// temporary files removed): what was done stays, and the caller's rescan finds the rest.
    public func perform(_ actions: [ProjectWriter.Action]) throws(Failure) {
        var writeCount = 0
        for case .write in actions { writeCount += 1 }
        var durability = Durability(together: writeCount >= Self.syncsFilesystemFrom, observe: observeDurability)
        defer { durability.close() }
        var index = actions.startIndex
        while index < actions.endIndex {
            var writes: [(ProjectPath, [UInt8])] = []
            while index < actions.endIndex, writes.count < Self.writesTogether, case .write(let path, let text) = actions[index] {
                writes.append((path, Array(text.utf8)))
                index += 1
            }
            if !writes.isEmpty {
                try writeTogether(writes, &durability)
                continue
            }
            switch actions[index] {
            case .write: break
            case .remove(let path): try remove(path)
            case .rename(let from, let to): try rename(from, to: to)
            case .removeFolderIfEmpty(let path): try removeFolderIfEmpty(path)
            }
            index += 1
        }
        if let code = durability.finish() {
            throw Failure(description: "files written, but their folders could not be synced: \(Descriptors.describe(code))")
        }
    }

    /// How many writes `perform` syncs together: each holds its file and its folder open until
    /// its rename, so this bounds the descriptors a pass takes.
    static let writesTogether = 64

    /// From how many writes in one `perform` they are made durable a filesystem at a time
    /// (`FilesystemSync`) rather than a file at a time: below it, a pass (a peer's edit to a
    /// few files) does not wait for the rest of the filesystem's dirty data.
    public static let syncsFilesystemFrom = 16

    /// Writes `text` to `path` atomically, making missing folders.
    public func write(_ text: String, to path: ProjectPath) throws(Failure) {
        try write(Array(text.utf8), to: path, syncingFolder: false)
    }

    /// Writes `bytes` to `path` atomically, making missing folders; when `syncingFolder`, the
    /// rename is made durable too (an editor's save, whose reply says the file holds the text).
    public func write(_ bytes: [UInt8], to path: ProjectPath, syncingFolder: Bool) throws(Failure) {
        let pending = try startWrite(bytes, to: path, serial: 0)
        defer { close(pending.folder) }
        var durability = Durability(together: false, observe: observeDurability)
        try finishWrites([pending], &durability, syncingFolders: false)
        if syncingFolder && fsync(pending.folder) != 0 {
            throw Failure(description: "\(shown(path)) written, but its folder could not be synced: \(Descriptors.describe(errno))")
        }
    }

    /// A file written under a temporary name in the folder of `path`, not yet synced or renamed;
    /// it holds `fd` (the temporary file) and `folder` open.
    struct PendingWrite {
        let path: ProjectPath
        let folder: Int32
        let fd: Int32
        let temporary: String
    }

    /// Writes every one of `writes` under its temporary name, then syncs them, then renames them
    /// into place in order (see `perform`).
    private func writeTogether(_ writes: [(ProjectPath, [UInt8])], _ durability: inout Durability) throws(Failure) {
        var pending: [PendingWrite] = []
        pending.reserveCapacity(writes.count)
        defer { for write in pending { close(write.folder) } }
        for (serial, (path, bytes)) in writes.enumerated() {
            do {
                let write = try startWrite(bytes, to: path, serial: serial)
                FileWriteback.start(write.fd)
                pending.append(write)
            } catch {
                abandon(pending[...])
                throw error
            }
        }
        try finishWrites(pending, &durability, syncingFolders: true)
    }

    /// Makes each of `pending` durable (`durability`) and closes it, then renames each into place
    /// in order, then (when `syncingFolders`) makes the renames durable; on a failure, the ones
    /// not renamed are removed and the failure is thrown. Their folders stay open.
    private func finishWrites(_ pending: [PendingWrite], _ durability: inout Durability, syncingFolders: Bool) throws(Failure) {
        var failure: Failure?
        if let code = durability.syncData(pending) {
            failure = Failure(description: "cannot write \(shown(pending[0].path))\(pending.count > 1 ? " and \(pending.count - 1) more" : ""): \(Descriptors.describe(code))")
        }
        for write in pending { close(write.fd) }
        var renamed = 0
        if failure == nil {
            for write in pending {
                durability.observe?(.renamed(write.path))
                guard renameat(write.folder, write.temporary, write.folder, String(write.path.name)) == 0 else {
                    failure = Failure(description: "cannot write \(shown(write.path)): \(Descriptors.describe(errno))")
                    break
                }
                renamed += 1
            }
        }
        for left in pending[renamed...] { unlinkat(left.folder, left.temporary, 0) }
        if syncingFolders, let code = durability.syncRenames(pending[..<renamed]), failure == nil {
            failure = Failure(description: "\(shown(pending[0].path)) written, but its folder could not be synced: \(Descriptors.describe(code))")
        }
        if let failure { throw failure }
    }

    /// Closes and removes the temporary files of `pending` (their folders stay open).
    private func abandon(_ pending: ArraySlice<PendingWrite>) {
        for write in pending {
            close(write.fd)
            unlinkat(write.folder, write.temporary, 0)
        }
    }

    /// Opens the folder of `path` (making missing folders) and writes `bytes` to a new temporary
    /// file in it, named after `serial` (distinct within a group); on a failure nothing is left behind.
    private func startWrite(_ bytes: [UInt8], to path: ProjectPath, serial: Int) throws(Failure) -> PendingWrite {
        let folder = try parent(of: path, creating: true)
        let name = String(path.name)
        // A new file is made 0644 less the umask (the kernel applies it; someone whose umask
        // keeps their files private gets private files); a replaced file keeps its mode exactly.
        var mode: mode_t = 0o644
        var replacing = false
        if let info = Descriptors.linkStatus(name, in: folder) {
            guard Descriptors.isRegular(info) else {
                close(folder)
                throw Failure(description: "\(shown(path)) is not a regular file; not written")
            }
            if let refused = trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: folder)) {
                close(folder)
                throw Failure(description: "\(shown(path)) not written: \(refused)")
            }
            // Only the owner's own file lends its mode, without set-user, set-group or sticky bits.
            if info.st_uid == trust.owner { mode = info.st_mode & 0o777 }
            replacing = true
        }
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<100 where fd < 0 {
            // 64 random bits (getrandom): another user who may write in the folder cannot have made
            // the name beforehand, so planting names cannot make every attempt fail (nor is a
            // planted name ever opened: `O_EXCL | O_NOFOLLOW`).
            temporary = ".quire-write-\(getpid())-\(serial)-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd < 0 && errno != EEXIST { break }
        }
        guard fd >= 0 else {
            let code = errno
            close(folder)
            throw Failure(description: "cannot write \(shown(path)): \(Descriptors.describe(code))")
        }
        if replacing { fchmod(fd, mode) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Glibc.write(fd, $0 + written, bytes.count - written) } ?? 0
            }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlinkat(folder, temporary, 0)
                close(folder)
                throw Failure(description: "cannot write \(shown(path)): \(Descriptors.describe(code))")
            }
            written += count
        }
        return PendingWrite(path: path, folder: folder, fd: fd, temporary: temporary)
    }

    /// The bytes of the regular file at `path`, read through the same walk (nil when nothing is
    /// there); throws, saying why, for a link or special file at the path or on its way, for
    /// what `trust` refuses there, and for a file over `maximumTextBytes`.
    public func bytes(at path: ProjectPath) throws(Failure) -> [UInt8]? {
        let folder: Int32
        switch openParent(of: path, creating: false) {
        case .success(let fd): folder = fd
        case .failure(let error) where error.code == ENOENT: return nil
        case .failure: folder = try parent(of: path, creating: false)   // throws, saying why
        }
        defer { close(folder) }
        let name = String(path.name)
        guard let info = Descriptors.linkStatus(name, in: folder) else { return nil }
        if Descriptors.isLink(info) { throw Failure(description: "\(shown(path)) is a symbolic link; not read") }
        let othersMayWrite = trust.othersMayWrite(fd: folder)
        switch Descriptors.openFile(name, in: folder) {
        case .failure(let error) where error.code == ENOENT: return nil
        case .failure(let error): throw Failure(description: "cannot read \(shown(path)): \(error.description)")
        case .success(let fd):
            defer { close(fd) }
            guard let status = Descriptors.status(fd), Descriptors.isRegular(status) else {
                throw Failure(description: "\(shown(path)) is not a regular file; not read")
            }
            if let refused = trust.reasonToRefuse(status, inOpenFolder: othersMayWrite) {
                throw Failure(description: "\(shown(path)) not read: \(refused)")
            }
            guard Int(status.st_size) <= maximumTextBytes else {
                throw Failure(description: "\(shown(path)) holds \(status.st_size) bytes, over the \(maximumTextBytes) a project file may hold; not read")
            }
            switch Descriptors.read(fd, upTo: Int(status.st_size) + 1) {
            case .success(let bytes) where bytes.count <= maximumTextBytes: return bytes
            case .success: throw Failure(description: "\(shown(path)) grew past the \(maximumTextBytes) bytes a project file may hold; not read")
            case .failure(let error): throw Failure(description: "cannot read \(shown(path)): \(error.description)")
            }
        }
    }

    /// Removes the file at `path` (never a folder).
    public func remove(_ path: ProjectPath) throws(Failure) {
        let folder = try parent(of: path, creating: false)
        defer { close(folder) }
        guard unlinkat(folder, String(path.name), 0) == 0 else {
            throw Failure(description: "cannot remove \(shown(path)): \(Descriptors.describe(errno))")
        }
    }

    /// Removes the folder at `path` if it is empty; a folder with anything in it stays.
    public func removeFolderIfEmpty(_ path: ProjectPath) throws(Failure) {
        let folder = try parent(of: path, creating: false)
        defer { close(folder) }
        guard unlinkat(folder, String(path.name), AT_REMOVEDIR) == 0 || errno == ENOTEMPTY || errno == EEXIST || errno == ENOENT else {
            throw Failure(description: "cannot remove the folder \(shown(path)): \(Descriptors.describe(errno))")
        }
    }

    /// Moves the file at `from` to `to`, which must not exist; makes the folders of `to`.
    public func rename(_ from: ProjectPath, to: ProjectPath) throws(Failure) {
        let source = try parent(of: from, creating: false)
        defer { close(source) }
        let target = try parent(of: to, creating: true)
        defer { close(target) }
        guard Descriptors.linkStatus(String(to.name), in: target) == nil else {
            throw Failure(description: "cannot move \(shown(from)) to \(shown(to)): something is there already")
        }
        guard renameat(source, String(from.name), target, String(to.name)) == 0 else {
            throw Failure(description: "cannot move \(shown(from)) to \(shown(to)): \(Descriptors.describe(errno))")
        }
    }

    private func parent(of path: ProjectPath, creating: Bool) throws(Failure) -> Int32 {
        switch openParent(of: path, creating: creating) {
        case .success(let fd): return fd
        case .failure(let error):
            let why = error.code == ELOOP || error.code == ENOTDIR ? "a symbolic link or a file is on its way"
                : error.code == Self.refusedFolder ? "a folder on its way belongs to another user, in a folder others may write in"
                : error.description
            throw Failure(description: "cannot reach \(shown(path)): \(why)")
        }
    }

    /// The code `openParent` fails with for a folder `FolderTrust` refuses (no errno uses it).
    private static let refusedFolder: Int32 = -1

    /// The folder `path` is in, opened from the root without following links; missing folders
    /// are made when `creating`.
    private func openParent(of path: ProjectPath, creating: Bool) -> Result<Int32, Errno> {
        var folder: Int32
        switch Descriptors.openRoot(root, trust: trust) {
        case .success(let fd): folder = fd
        case .failure(let error): return .failure(error)
        }
        for component in path.components.dropLast() {
            let name = String(component)
            var next = Descriptors.openFolder(name, in: folder)
            if case .failure(let error) = next, error.code == ENOENT, creating {
                if mkdirat(folder, name, 0o755) != 0 && errno != EEXIST {
                    let code = errno
                    close(folder)
                    return .failure(Errno(code: code))
                }
                next = Descriptors.openFolder(name, in: folder)
            }
            let othersMayWrite = trust.othersMayWrite(fd: folder)
            close(folder)
            switch next {
            case .success(let fd):
                folder = fd
                if let info = Descriptors.status(fd), trust.reasonToRefuse(info, inOpenFolder: othersMayWrite) != nil {
                    close(fd)
                    return .failure(Errno(code: Self.refusedFolder))
                }
            case .failure(let error): return .failure(error)
            }
        }
        return .success(folder)
    }

    private func shown(_ path: ProjectPath) -> String { path.string.debugDescription }
}
