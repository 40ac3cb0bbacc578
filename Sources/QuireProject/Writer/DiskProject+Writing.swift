import Glibc

// How `DiskProject` writes a file: under a temporary name in the target's folder, synced, then
// renamed over the target; several at a time for `perform`.
extension DiskProject {
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
        if let failure = finishWrites([pending], &durability, syncingFolders: false).failure { throw failure }
        if syncingFolder && fsync(pending.folder) != 0 {
            throw Failure(description: "\(shown(path)) written, but its folder could not be synced: \(Descriptors.describe(errno))")
        }
    }

    /// How a disk pass's temporary files are named (`forPass`), told apart from an editor's
    /// save and from other processes' files by the folder watch (`ProjectWatcher`).
    public static let passTemporaryPrefix = ".quire-write-\(getpid())-p"

    /// A file `perform` wrote, as it was once synced: what the daemon compares the file with
    /// later to tell whether anyone changed it since (size, modification time, inode).
    public struct WrittenFile: Equatable, Sendable {
        public let size: Int64
        public let modified: Int64
        public let modifiedNanoseconds: Int64
        public let inode: UInt64

        public init(_ info: stat) {
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
            inode = UInt64(info.st_ino)
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
    /// into place in order (see `perform`); returns how many, from the first, are in place (their
    /// renames durable or left to `durability.finish`), and why the next one is not.
    func writeTogether(_ writes: [(ProjectPath, [UInt8])], _ durability: inout Durability) -> (renamed: Int, failure: Failure?) {
        var pending: [PendingWrite] = []
        pending.reserveCapacity(writes.count)
        defer { for write in pending { close(write.folder) } }
        // Each folder of the group is opened (from the root, checked on the way) once, and each
        // write holds a duplicate of its descriptor: files of the same folder in a group no longer
        // walk the whole path again (a third of a join's writing time went into that).
        var folders: [String: Int32] = [:]
        defer { for fd in folders.values { close(fd) } }
        for (serial, (path, bytes)) in writes.enumerated() {
            do throws(Failure) {
                let parent = path.ancestors.last ?? ""
                let folder: Int32
                if let open = folders[parent] { folder = open } else {
                    folder = try self.parent(of: path, creating: true)
                    folders[parent] = folder
                }
                let own = dup(folder)
                guard own >= 0 else { throw Failure(description: "cannot write \(shown(path)): \(Descriptors.describe(errno))") }
                let write = try startWrite(bytes, to: path, serial: serial, in: own)
                FileWriteback.start(write.fd)
                pending.append(write)
            } catch {
                abandon(pending[...])
                return (0, error)
            }
        }
        return finishWrites(pending, &durability, syncingFolders: true)
    }

    /// Makes each of `pending` durable (`durability`) and closes it, then renames each into place
    /// in order, then (when `syncingFolders`) makes the renames durable; on a failure, the ones
    /// not renamed are removed. Returns how many, from the first, were renamed and their renames
    /// made durable (none when that sync failed), and the failure. Their folders stay open.
    private func finishWrites(_ pending: [PendingWrite], _ durability: inout Durability, syncingFolders: Bool) -> (renamed: Int, failure: Failure?) {
        var failure: Failure?
        if let code = durability.syncData(pending) {
            failure = Failure(description: "cannot write \(shown(pending[0].path))\(pending.count > 1 ? " and \(pending.count - 1) more" : ""): \(Descriptors.describe(code))")
        }
        if failure == nil {
            // What each file is on disk once renamed (its inode, size and time do not change with
            // the rename): a change by anyone after this differs from it.
            for write in pending {
                var info = stat()
                if fstat(write.fd, &info) == 0 { durability.written[write.path] = WrittenFile(info) }
            }
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
        if syncingFolders, let code = durability.syncRenames(pending[..<renamed]) {
            if failure == nil {
                failure = Failure(description: "\(shown(pending[0].path)) written, but its folder could not be synced: \(Descriptors.describe(code))")
            }
            return (0, failure)
        }
        return (renamed, failure)
    }

    /// Closes and removes the temporary files of `pending` (their folders stay open).
    private func abandon(_ pending: ArraySlice<PendingWrite>) {
        for write in pending {
            close(write.fd)
            unlinkat(write.folder, write.temporary, 0)
        }
    }

    /// Opens the folder of `path` (making missing folders), or takes `openFolder` (a descriptor of
    /// it, the write's from now on), and writes `bytes` to a new temporary file in it, named after
    /// `serial` (distinct within a group); on a failure nothing is left behind.
    private func startWrite(_ bytes: [UInt8], to path: ProjectPath, serial: Int, in openFolder: Int32? = nil) throws(Failure) -> PendingWrite {
        let folder: Int32
        if let openFolder { folder = openFolder } else { folder = try parent(of: path, creating: true) }
        let name = String(path.name)
        // A new file is made 0644 less the umask (the kernel applies it; someone whose umask
        // keeps their files private gets private files); a replaced file keeps its mode exactly.
        var mode: mode_t = 0o644
        var group: gid_t?
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
            // Its group too: a file kept for a group stays that group's, not the user's primary one.
            if info.st_uid == trust.owner {
                mode = info.st_mode & 0o777
                group = info.st_gid
            }
            replacing = true
        }
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<100 where fd < 0 {
            // 64 random bits (getrandom): another user who may write in the folder cannot have made
            // the name beforehand, so planting names cannot make every attempt fail (nor is a
            // planted name ever opened: `O_EXCL | O_NOFOLLOW`).
            temporary = (forPass ? Self.passTemporaryPrefix : ".quire-write-\(getpid())-") + "\(serial)-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            fd = openat(folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd < 0 && errno != EEXIST { break }
        }
        guard fd >= 0 else {
            let code = errno
            close(folder)
            throw Failure(description: "cannot write \(shown(path)): \(Descriptors.describe(code))")
        }
        if replacing {
            // The group before the mode (a change of group may clear bits); where the user may
            // not give it that group, its permissions fall to others', so no one gains access.
            if let group, fchown(fd, uid_t.max, group) != 0 {
                mode = (mode & ~0o070) | ((mode & 0o007) << 3)
            }
            fchmod(fd, mode)
        }
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
}
