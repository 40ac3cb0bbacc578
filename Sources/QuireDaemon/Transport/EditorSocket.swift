import Glibc

/// The Unix socket editors attach to (`--socket PATH`, or the default place), or the one peer
/// links arrive on (`peer.sock`), bound so that only its user can reach it and removed only if
/// it is still the one this daemon made.
///
/// Guarantees:
/// 1. The socket file is mode 0600 from the moment it exists: the mode is set on the socket
///    before `bind` (Linux takes a socket file's mode from its socket), never after.
/// 2. Before binding, the only thing ever removed at `path` is a socket owned by this user (a
///    stale one, left by a daemon that died); a directory, regular file, symbolic link or
///    another user's socket there is an error, and is left as it is. Nothing is removed
///    recursively.
/// 3. `bind` itself fails when anything appeared at `path` meanwhile, so nothing is replaced.
/// 4. At exit, `path` is unlinked only while it is still this socket (same device and inode,
///    still a socket of this user's).
final class EditorSocket {
    let path: String
    /// The bound descriptor, not yet listening; the server channel takes it over.
    let descriptor: Int32
    private let device: dev_t
    private let inode: ino_t

    private init(path: String, descriptor: Int32, device: dev_t, inode: ino_t) {
        self.path = path
        self.descriptor = descriptor
        self.device = device
        self.inode = inode
    }

    /// Binds a new socket at `path`, removing a stale socket of this user's first; `kind`
    /// names it in errors.
    static func bind(path: String, kind: LocalSocketKind = .editor) throws -> EditorSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else {
            throw EditorSocketError("the socket path \(path) is empty or longer than \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        try removeStale(at: path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw EditorSocketError("cannot make a socket for \(path): \(String(cString: strerror(errno)))") }
        guard fchmod(fd, 0o600) == 0 else {
            let code = errno
            close(fd)
            throw EditorSocketError("cannot set the mode of the socket for \(path): \(String(cString: strerror(code)))")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            if code == EADDRINUSE {
                throw EditorSocketError("cannot listen for \(kind.plural) on \(path): something else appeared there meanwhile; it is left as it is")
            }
            throw EditorSocketError("cannot listen for \(kind.plural) on \(path): \(String(cString: strerror(code)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let code = errno
            close(fd)
            throw EditorSocketError("the socket \(path) vanished as it was made: \(String(cString: strerror(code)))")
        }
        // The umask can only take bits away: put back the owner's, never anyone else's.
        if info.st_mode & 0o777 != 0o600 { _ = chmod(path, 0o600) }
        return EditorSocket(path: path, descriptor: fd, device: info.st_dev, inode: info.st_ino)
    }

    /// Unlinks `path` when it is a socket owned by this user; does nothing when nothing is
    /// there; throws, leaving it alone, when anything else is.
    static func removeStale(at path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw EditorSocketError("cannot check \(path): \(String(cString: strerror(errno)))")
        }
        if let refusal = refusalToReplace(path: path, mode: info.st_mode, owner: info.st_uid, ownUID: getuid()) {
            throw EditorSocketError(refusal)
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw EditorSocketError("cannot remove the old socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Why what is at `path` (of `mode`, owned by `owner`) must not be replaced by the editor
    /// socket; nil when it is a socket of `ownUID`'s, which may go.
    static func refusalToReplace(path: String, mode: mode_t, owner: uid_t, ownUID: uid_t) -> String? {
        let what: String
        switch mode & S_IFMT {
        case S_IFSOCK:
            guard owner != ownUID else { return nil }
            return "\(path) is a socket that belongs to uid \(owner), not to you (uid \(ownUID)); quire leaves it alone. Choose another --socket path"
        case S_IFDIR: what = "a directory"
        case S_IFREG: what = "a regular file"
        case S_IFLNK: what = "a symbolic link"
        default: what = "not a socket"
        }
        return "\(path) is \(what), not a socket; quire replaces only a stale socket of its own and leaves it alone. Choose another --socket path"
    }

    /// Unlinks the socket if `path` still is the one this daemon bound; anything else there
    /// (another daemon's socket, a file put there since) is left alone.
    func removeIfStillOurs() {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == getuid(),
              info.st_dev == device, info.st_ino == inode else { return }
        unlink(path)
    }
}
