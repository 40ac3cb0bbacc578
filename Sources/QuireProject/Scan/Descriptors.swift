import Glibc

/// File-descriptor helpers for reading a project without ever following a symbolic link: every
/// open is relative to a folder's descriptor and refuses links (`O_NOFOLLOW`), so a link swapped
/// in during a scan cannot lead outside the root; the root itself is reached from `/` the same
/// way (`openRoot`).
enum Descriptors {
    /// An `errno` as words.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Opens the folder `name` inside the folder `parent` (or the path `name` when `parent` is
    /// `AT_FDCWD`), refusing links.
    static func openFolder(_ name: String, in parent: Int32) -> Result<Int32, Errno> {
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        return fd >= 0 ? .success(fd) : .failure(Errno(code: errno))
    }

    /// Opens the project's root folder, refusing a symbolic link at any step of its path: the
    /// daemon resolves a root once (`realpath`, when it is shared or joined) and keeps the
    /// resolved path, so a link on that path later was put there by someone who may write in a
    /// folder above the root, and could lead the scan and the writer into any folder of the
    /// owner's (`~/.ssh`). Walked from `/` (the working folder for a relative path) one folder at
    /// a time with `O_NOFOLLOW`; `.` and `..` are the folders they name on that walk.
    ///
    /// The root itself is judged as any folder in it is (`trust`): another user's folder, in a
    /// folder others may write in, is refused (put in place of the project's, it is not taken
    /// for all its files deleted, nor written into where they would read what is written).
    static func openRoot(_ path: String, trust: FolderTrust) -> Result<Int32, Errno> {
        // The folders above the root are opened as places only (`openPath`): walking through them
        // needs no more than the search permission a path lookup needs.
        let components = path.utf8.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
        var folder = open(path.hasPrefix("/") ? "/" : ".", (components.isEmpty ? O_RDONLY : openPath) | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return .failure(Errno(code: errno)) }
        for (index, name) in components.enumerated() {
            let next = openat(folder, name, (index == components.count - 1 ? O_RDONLY : openPath) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                var error = Errno(code: errno)
                if error.code == ELOOP || error.code == ENOTDIR, let info = linkStatus(name, in: folder), isLink(info) {
                    error.why = "\(ProjectPath.shown(name)) on the folder's path is a symbolic link (put there since the folder was shared; not followed)"
                }
                close(folder)
                return .failure(error)
            }
            if index == components.count - 1, let info = status(next), let refused = trust.reasonToRefuse(info, inOpenFolder: trust.othersMayWrite(fd: folder)) {
                close(next)
                close(folder)
                return .failure(Errno(code: EACCES, why: "the project folder is \(refused)"))
            }
            close(folder)
            folder = next
        }
        return .success(folder)
    }

    /// Linux's `O_PATH` (not in Swift's Glibc module): a descriptor that only names a place.
    private static let openPath: Int32 = 0o10000000

    /// Opens the file `name` inside the folder `parent` for reading, refusing links and never
    /// blocking (a FIFO opens at once and is then refused by its type).
    static func openFile(_ name: String, in parent: Int32) -> Result<Int32, Errno> {
        let fd = openat(parent, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        return fd >= 0 ? .success(fd) : .failure(Errno(code: errno))
    }

    /// The status of `fd`.
    static func status(_ fd: Int32) -> stat? {
        var info = stat()
        return fstat(fd, &info) == 0 ? info : nil
    }

    /// The status of `name` in the folder `parent`, not following a link.
    static func linkStatus(_ name: String, in parent: Int32) -> stat? {
        var info = stat()
        return fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 ? info : nil
    }

    static func isRegular(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFREG }
    static func isFolder(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFDIR }
    static func isLink(_ info: stat) -> Bool { info.st_mode & S_IFMT == S_IFLNK }

    /// Up to `limit` bytes from `fd`, read until end of file or `limit`.
    static func read(_ fd: Int32, upTo limit: Int) -> Result<[UInt8], Errno> {
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let count = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { Glibc.read(fd, $0 + filled, limit - filled) } ?? 0
            }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(Errno(code: errno))
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return .success(bytes)
    }

    /// The names in the folder open as `fd` (which this takes over and closes), without `.` and
    /// `..`, as raw bytes, sorted bytewise; nil past `limit` names.
    static func names(inFolder fd: Int32, limit: Int) -> Result<[[UInt8]], Errno>? {
        guard let stream = fdopendir(fd) else {
            let code = errno
            close(fd)
            return .failure(Errno(code: code))
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { return .failure(Errno(code: errno)) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
            if names.count > limit { return nil }
        }
        names.sort { $0.lexicographicallyPrecedes($1) }
        return .success(names)
    }
}

/// An `errno` value from a failed call.
struct Errno: Error {
    var code: Int32
    /// What happened, when the system's words for `code` would mislead.
    var why: String?
    init(code: Int32, why: String? = nil) {
        self.code = code
        self.why = why
    }
    var description: String { why ?? Descriptors.describe(code) }
}
