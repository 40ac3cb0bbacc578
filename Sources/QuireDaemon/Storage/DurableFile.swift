import Glibc
import QuireProject

/// A failed file-system call, with the path and the system's reason.
public struct StorageError: Error, CustomStringConvertible {
    public let description: String
    /// The data directory is locked by another running daemon (which serves editors on its
    /// `editors.sock`).
    public let isLockHeld: Bool

    init(_ description: String, isLockHeld: Bool = false) {
        self.description = description
        self.isLockHeld = isLockHeld
    }

    /// The failure of `call` on `path`, with `errno`'s explanation.
    static func system(_ call: String, _ path: String, errno code: Int32 = errno) -> StorageError {
        StorageError("\(call) \(path): \(String(cString: strerror(code)))")
    }
}

/// An open file descriptor for appending and syncing, closed when released.
///
/// Guarantees: `append` writes every byte or throws; `sync` returns only once the kernel reports
/// the data on stable storage (fdatasync).
final class AppendableFile {
    let path: String
    private let fd: Int32
    /// Bytes in the file (as of the last append).
    private(set) var size: Int

    /// Opens `path` for appending, creating it (mode 0600) when `create` is set.
    init(path: String, create: Bool) throws {
        self.path = path
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0), 0o600)
        guard descriptor >= 0 else { throw StorageError.system("open", path) }
        fd = descriptor
        var info = stat()
        guard fstat(fd, &info) == 0 else { close(fd); throw StorageError.system("stat", path) }
        size = Int(info.st_size)
    }

    deinit { close(fd) }

    func append(_ bytes: [UInt8]) throws {
        try FileSystem.writeAll(bytes, to: fd, path: path)
        size += bytes.count
    }

    func sync() throws {
        guard fdatasync(fd) == 0 else { throw StorageError.system("fdatasync", path) }
    }

    /// Starts writing the file's dirty pages back without waiting (see `FileSystem.startWriteback`).
    func startWriteback() {
        FileSystem.startWriteback(fd)
    }

    /// Cuts the file to `length` bytes (dropping a damaged tail) and syncs.
    func truncate(to length: Int) throws {
        guard ftruncate(fd, off_t(length)) == 0 else { throw StorageError.system("truncate", path) }
        size = length
        try sync()
    }
}

/// The few POSIX file operations the store needs, with errors that name the path.
enum FileSystem {
    static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw StorageError.system("write", path) }
            offset += n
        }
    }

    /// The whole content of `path`, or nil when it does not exist; throws, allocating nothing of
    /// it, when it holds more than `limit` bytes (`tooLarge`, naming the file and its size).
    static func read(_ path: String, limit: Int = .max) throws -> [UInt8]? {
        // Non-blocking, so a FIFO or device in the data directory fails the check below instead
        // of hanging the read (no effect on a regular file).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StorageError.system("open", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError.system("fstat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw StorageError("\(path) is not a regular file") }
        return try readAll(fd, path: path, sizeHint: Int(info.st_size), limit: limit)
    }

    /// Everything left to read from `fd`; throws, having allocated no more than `limit` bytes,
    /// when the file (its size `sizeHint`, or what is read) holds more than `limit`.
    static func readAll(_ fd: Int32, path: String, sizeHint: Int, limit: Int = .max) throws -> [UInt8] {
        guard sizeHint <= limit else { throw tooLarge(path, bytes: sizeHint, limit: limit) }
        var result: [UInt8] = []
        result.reserveCapacity(max(0, sizeHint))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw StorageError.system("read", path) }
            if n == 0 { return result }
            guard n <= limit - result.count else { throw tooLarge(path, bytes: result.count + n, limit: limit) }
            result.append(contentsOf: chunk[0..<n])
        }
    }

    /// A file read with a bound that holds more (`bytes`, or at least that many when it grew).
    static func tooLarge(_ path: String, bytes: Int, limit: Int) -> StorageError {
        StorageError("\(path) holds \(bytes) bytes, more than the \(limit) Quire ever writes there; not read (move it away)")
    }

    /// Replaces `path` with `bytes` so that a crash leaves either the old or the new content:
    /// written to a temporary file, synced, renamed over `path`, and the directory synced.
    ///
    /// The temporary file is one nobody else can have prepared: a new name in `path`'s directory
    /// with 128 random bits in it (`temporaryName`), created with `O_CREAT | O_EXCL | O_NOFOLLOW`
    /// (so a file or symlink planted under that name, or under the old predictable `PATH.tmp`,
    /// is never opened, followed or changed), given exactly `mode` with `fchmod` on the
    /// descriptor (never `chmod` by path), written, fsynced, then renamed. The rename replaces
    /// `path` itself: a symlink at `path` is replaced, never followed.
    ///
    /// `group`: the group the file is given (`fchown`, before the mode, which a change of owner
    /// could clear), as the file it replaces had; when the user may not give it that group, the
    /// group's permissions become those of others, so no one gains access by the change (as Vim
    /// does). Nil: the user's primary group, as a new file gets.
    static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, group: gid_t? = nil) throws {
        var attempts = 0
        var temporary = temporaryName(for: path)
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        while fd < 0 && errno == EEXIST && attempts < 8 {
            // 128 random bits taken: only someone who watched us could have; try another name.
            attempts += 1
            temporary = temporaryName(for: path)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw StorageError.system("open", temporary) }
        do {
            var mode = mode
            if let group, fchown(fd, uid_t.max, group) != 0 {
                mode = (mode & ~0o070) | ((mode & 0o007) << 3)
            }
            // Exactly `mode`, whatever the umask, on the file we created and hold open.
            guard fchmod(fd, mode) == 0 else { throw StorageError.system("fchmod", temporary) }
            try writeAll(bytes, to: fd, path: temporary)
            guard fsync(fd) == 0 else { throw StorageError.system("fsync", temporary) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw StorageError.system("rename", temporary, errno: code)
        }
        try syncDirectory(containing: path)
    }

    /// Writes `bytes` to a new file at `path` (mode 0600; never through a symbolic link), without
    /// syncing: for a file in a directory just made, which `syncFile` makes durable later.
    static func writeNew(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError.system("open", path) }
        defer { close(fd) }
        try writeAll(bytes, to: fd, path: path)
    }

    /// Starts writing back the dirty pages of `fd` without waiting for them: a hint, whose
    /// failure the later `fsync`/`fdatasync` reports. Started for many files before the first of
    /// them is synced, their writeback (and, on ext4, the allocation of their blocks) goes into
    /// one journal commit instead of one each: on this project's machine 0.3 ms per new
    /// document instead of several.
    static func startWriteback(_ fd: Int32) {
        FileWriteback.start(fd)
    }

    /// `startWriteback` for the file at `path` (opened for it and closed; the writeback goes on).
    static func startWriteback(_ path: String) {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        startWriteback(fd)
        close(fd)
    }

    /// Puts the content of the file at `path` on stable storage (fsync on a new descriptor: the
    /// kernel syncs the file, whichever descriptor wrote it).
    static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError.system("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StorageError.system("fsync", path) }
    }

    /// A fresh temporary name beside `path`: `.NAME.<32 random hex digits>.tmp` (hidden, and
    /// ending in `.tmp`, which the store's listing skips).
    static func temporaryName(for path: String) -> String {
        var generator = SystemRandomNumberGenerator()   // getrandom(2)
        let random = Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let directory = directory(of: path)
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        return (directory == "/" ? "" : directory) + "/." + name + "." + random + ".tmp"
    }

    /// The content of the regular file at `path` as a user's file is read: nil when it does not
    /// exist; refused when it is a symbolic link (`O_NOFOLLOW`: a bound file is the file the
    /// user named, and a link planted in its place must not make Quire read, share or later
    /// write what it points to; the user opens the target itself instead) or not a regular
    /// file (checked on the open descriptor, which `O_NONBLOCK` keeps a FIFO from blocking);
    /// refused, nothing allocated for it, when it holds more than `limit` bytes.
    static func readUserFile(_ path: String, limit: Int = .max) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP {
                throw StorageError("\(path) is a symbolic link; Quire opens only the file itself (open the file it points to)")
            }
            throw StorageError.system("open", path, errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError.system("stat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw StorageError("\(path) is not a regular file") }
        guard Int(info.st_size) <= limit else {
            throw StorageError("\(path) holds \(info.st_size) bytes, more than a document can hold (\(limit) bytes); not read")
        }
        return try readAll(fd, path: path, sizeHint: Int(info.st_size), limit: limit)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Makes a rename, creation or removal in the directory of `path` durable.
    static func syncDirectory(containing path: String) throws {
        try syncDirectory(directory(of: path))
    }

    static func syncDirectory(_ directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError.system("open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StorageError.system("fsync", directory) }
    }

    /// Creates `path` and any missing parents with mode 0700; an existing directory is kept
    /// as it is.
    static func makeDirectory(_ path: String) throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw StorageError("\(path) exists and is not a directory") }
            return
        }
        let parent = directory(of: path)
        if parent != path && parent != "." && parent != "/" { try makeDirectory(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw StorageError.system("mkdir", path) }
    }

    /// Names in `directory`, without `.` and `..`; empty when it does not exist.
    static func list(_ directory: String) throws -> [String] {
        guard let dir = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw StorageError.system("opendir", directory)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    /// The permission bits of `path`, or nil when it does not exist.
    static func permissions(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// The size of `path` in bytes, or nil when it cannot be read.
    static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}
