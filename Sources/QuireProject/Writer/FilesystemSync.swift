import Glibc

/// Makes many new files durable at once with Linux's `syncfs`, one call per filesystem, instead
/// of one `fsync` each.
///
/// Why: on ext4 without a journal (this project's benchmark disk), each `fsync` of a new file
/// writes its inode block and its folder's blocks one synchronous write at a time and ends with
/// a cache flush of its own: 2,000 new files took 2-4 s of syncs in groups of 64, and the dirty
/// inode blocks they leave make the kernel pass over recently freed inodes for 360 s instead of
/// 60 s on every later create. One `syncfs` per group writes the same blocks together and
/// flushes once (0.3-0.55 s for the same files; `protocol/decisions/project-files.md`,
/// *Syncing a joined project's files*). With a journal, `syncfs` is one commit and one flush.
///
/// Guarantees: when `sync` returns nil, every file written on those filesystems before the call
/// is on stable storage (data, inode and the names made so far); a failure (from Linux 5.8,
/// a writeback error on the filesystem since `fd` was opened) is returned, never ignored. The
/// cost is the whole filesystem's dirty data, not only these files': callers keep it for bulk
/// writes and sync a few files one by one.
public enum FilesystemSync {
    /// Syncs the filesystem of each of `fds` once (one descriptor per distinct device is
    /// used); the errno of the first failure, nil when all succeeded.
    public static func sync(_ fds: [Int32]) -> Int32? {
        var devices: Set<UInt64> = []
        for fd in fds {
            var info = stat()
            guard fstat(fd, &info) == 0 else { return errno }
            guard devices.insert(UInt64(info.st_dev)).inserted else { continue }
            guard let syncfs else {
                // No `syncfs` in this C library: the caller's files one by one.
                for each in fds where fsync(each) != 0 { return errno }
                return nil
            }
            if syncfs(fd) != 0 { return errno }
        }
        return nil
    }

    /// glibc's `syncfs`, looked up once (not every C library has it).
    private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()
}
