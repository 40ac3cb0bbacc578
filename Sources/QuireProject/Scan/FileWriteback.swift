import Glibc

/// Starts the writeback of a file's dirty pages without waiting for it (Linux's
/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`). Started for many new files before the first of them
/// is synced, their blocks are allocated and their inodes go into one journal commit on ext4,
/// so the syncs after the first find their work done instead of each waiting for a commit of
/// its own. Advice only: a failure shows in the `fsync` that follows.
public enum FileWriteback {
    /// Starts writing back every dirty page of the open file `fd`.
    public static func start(_ fd: Int32) {
        _ = syncFileRange?(fd, 0, 0, 2 /* SYNC_FILE_RANGE_WRITE */)
    }

    /// glibc's `sync_file_range` (not in Swift's Glibc module), looked up once; nil where there
    /// is none, and then writeback starts at each sync as it would anyway.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()
}
