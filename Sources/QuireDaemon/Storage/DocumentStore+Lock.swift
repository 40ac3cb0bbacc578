import Foundation

/// The data directory's lock: one daemon at a time owns a data directory.
extension DocumentStore {
    /// How long a lock recorded as this process's own is retried (`lock`).
    static let ownLockRetryNanoseconds: UInt64 = 1_000_000_000

    /// Takes an exclusive lock on `lockPath` (held until the process ends) and records the pid in it.
    /// The lock file is opened without following a symbolic link and must be a regular file of
    /// the user's, so a planted link cannot make the daemon truncate another file.
    static func lock(_ lockPath: String) throws -> Int32 {
        guard let fd = try OwnedFiles.open(lockPath, flags: O_RDWR | O_CREAT) else { throw StorageError.system("open", lockPath) }
        // A lock this process let go a moment ago (a store released, then one opened again on the
        // same directory) can still be held by a child another thread is spawning: between its
        // fork and its exec it holds a copy of every descriptor, the lock's among them (O_CLOEXEC
        // closes it only at the exec). Only then is the lock retried, for a second at most.
        let deadline = DispatchTime.now().uptimeNanoseconds + Self.ownLockRetryNanoseconds
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var bytes = [UInt8](repeating: 0, count: 32)
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            let holder = String(decoding: bytes.prefix(max(0, n)), as: UTF8.self)
            let pid = holder.trimmingCharacters(in: .whitespacesAndNewlines)
            if pid == String(getpid()) && DispatchTime.now().uptimeNanoseconds < deadline {
                usleep(2_000)
                continue
            }
            close(fd)
            throw StorageError("the data directory \(FileSystem.directory(of: lockPath)) is in use by another quire\(pid.isEmpty ? "" : " (pid \(pid))")",
                               isLockHeld: true)
        }
        _ = ftruncate(fd, 0)
        let pid = Array("\(getpid())\n".utf8)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return fd
    }
}
