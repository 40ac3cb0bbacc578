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
    /// Told each step taken to make writes durable, in order (tests check it, and make a step
    /// fail at a chosen moment).
    public var observeDurability: (@Sendable (DurabilityStep) -> Void)?
    /// Temporary files are named as a disk pass's (`passTemporaryPrefix`): the daemon's folder
    /// watch takes their events for its own.
    public var forPass = false
    /// Called as `perform` goes: after each group of writes is renamed into place, and after
    /// every `actionsBetweenCalls` other actions (the daemon reads its folder watch there, so the
    /// events of a pass of thousands of files do not overflow the watch's queue).
    public var betweenGroups: (@Sendable () -> Void)?
    static let actionsBetweenCalls = 256

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
    /// (`FilesystemSync`), and its renames, removals and new folders with one more at the end; a
    /// smaller pass syncs each file, then each folder it renamed into, once, and each folder it
    /// moved or removed a file in once at its end. Either way, when `perform` returns, every file
    /// it wrote and every name it gave or took is durable, so what the caller then records as
    /// written is on disk after a crash.
    /// When one of them fails, the writes of its group not yet renamed are dropped too (their
    /// temporary files removed): what was done stays, and the caller's rescan finds the rest.
    @discardableResult
    public func perform(_ actions: [ProjectWriter.Action]) throws(Failure) -> [ProjectPath: WrittenFile] {
        let performed = performReporting(actions)
        if let failure = performed.failure { throw failure }
        return performed.written
    }

    /// How far `performReporting` got.
    public struct Performed: Sendable {
        /// How many of the actions, from the first, were carried out and are durable: all of
        /// them when `failure` is nil. The rest were not carried out (a write not renamed into
        /// place leaves nothing behind) or, when the last syncs failed, may not survive a crash.
        public var done: Int
        /// The files written among the first `done` actions, as synced.
        public var written: [ProjectPath: WrittenFile]
        /// Why the action at `done` failed (or the final sync).
        public var failure: Failure?
    }

    /// `perform`, telling on a failure what reached the disk durably before it: a pass that
    /// fails part way records those (else its own files would later read as someone's edit and
    /// be merged into their documents a second time), and leaves the rest for the next pass.
    /// What was carried out before the failure is made durable before this returns, as on success.
    public func performReporting(_ actions: [ProjectWriter.Action]) -> Performed {
        var writeCount = 0
        for case .write in actions { writeCount += 1 }
        var durability = Durability(together: writeCount >= Self.syncsFilesystemFrom, observe: observeDurability)
        defer { durability.close() }
        var index = actions.startIndex
        var done = index
        var failure: Failure?
        while index < actions.endIndex, failure == nil {
            var writes: [(ProjectPath, [UInt8])] = []
            let groupStart = index
            while index < actions.endIndex, writes.count < Self.writesTogether, case .write(let path, let text) = actions[index] {
                writes.append((path, Array(text.utf8)))
                index += 1
            }
            if !writes.isEmpty {
                let (renamed, groupFailure) = writeTogether(writes, &durability)
                done = groupStart + renamed
                failure = groupFailure
                betweenGroups?()
                continue
            }
            do throws(Failure) {
                switch actions[index] {
                case .write: break
                case .remove(let path): try remove(path, &durability)
                case .rename(let from, let to): try rename(from, to: to, &durability)
                case .removeFolderIfEmpty(let path): try removeFolderIfEmpty(path, &durability)
                }
                index += 1
                done = index
                if index % Self.actionsBetweenCalls == 0 { betweenGroups?() }
            } catch {
                failure = error
            }
        }
        if let code = durability.finish() {
            // Nothing carried out can be told durable.
            let why = Failure(description: "files written, but their folders could not be synced: \(Descriptors.describe(code))")
            return Performed(done: 0, written: [:], failure: failure ?? why)
        }
        var written = durability.written
        if failure != nil {
            written = [:]
            for case .write(let path, _) in actions[..<done] { written[path] = durability.written[path] }
        }
        return Performed(done: done, written: written, failure: failure)
    }

    /// How many writes `perform` syncs together: each holds its file and its folder open until
    /// its rename, so this bounds the descriptors a pass takes.
    static let writesTogether = 64

    /// From how many writes in one `perform` they are made durable a filesystem at a time
    /// (`FilesystemSync`) rather than a file at a time: below it, a pass (a peer's edit to a
    /// few files) does not wait for the rest of the filesystem's dirty data.
    public static let syncsFilesystemFrom = 16

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

    /// Removes the file at `path` (never a folder); the removal is not synced.
    public func remove(_ path: ProjectPath) throws(Failure) {
        var durability = Durability(together: false, observe: nil)
        defer { durability.close() }
        try remove(path, &durability)
    }

    /// Removes the folder at `path` if it is empty; a folder with anything in it stays. The
    /// removal is not synced.
    public func removeFolderIfEmpty(_ path: ProjectPath) throws(Failure) {
        var durability = Durability(together: false, observe: nil)
        defer { durability.close() }
        try removeFolderIfEmpty(path, &durability)
    }

    /// Moves the file at `from` to `to`, which must not exist; makes the folders of `to`. The
    /// move is not synced.
    public func rename(_ from: ProjectPath, to: ProjectPath) throws(Failure) {
        var durability = Durability(together: false, observe: nil)
        defer { durability.close() }
        try rename(from, to: to, &durability)
    }

    /// `remove`, its folder left to `durability` to sync.
    func remove(_ path: ProjectPath, _ durability: inout Durability) throws(Failure) {
        let folder = try parent(of: path, creating: false)
        defer { close(folder) }
        guard unlinkat(folder, String(path.name), 0) == 0 else {
            throw Failure(description: "cannot remove \(shown(path)): \(Descriptors.describe(errno))")
        }
        try changed(folder, path, &durability)
    }

    /// `removeFolderIfEmpty`, its parent left to `durability` to sync when it went.
    func removeFolderIfEmpty(_ path: ProjectPath, _ durability: inout Durability) throws(Failure) {
        let folder = try parent(of: path, creating: false)
        defer { close(folder) }
        if unlinkat(folder, String(path.name), AT_REMOVEDIR) == 0 {
            try changed(folder, path, &durability)
        } else if errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT {
            throw Failure(description: "cannot remove the folder \(shown(path)): \(Descriptors.describe(errno))")
        }
    }

    /// `rename`, both folders left to `durability` to sync.
    func rename(_ from: ProjectPath, to: ProjectPath, _ durability: inout Durability) throws(Failure) {
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
        try changed(source, from, &durability)
        try changed(target, to, &durability)
    }

    /// `folder` (of `path`) changed: `durability` syncs it before `perform` returns.
    private func changed(_ folder: Int32, _ path: ProjectPath, _ durability: inout Durability) throws(Failure) {
        if let code = durability.noteChanged(folder, path) {
            throw Failure(description: "\(shown(path)) changed, but its folder cannot be synced: \(Descriptors.describe(code))")
        }
    }

    func parent(of path: ProjectPath, creating: Bool) throws(Failure) -> Int32 {
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
    func openParent(of path: ProjectPath, creating: Bool) -> Result<Int32, Errno> {
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

    func shown(_ path: ProjectPath) -> String { path.string.debugDescription }
}
