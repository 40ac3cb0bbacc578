import Glibc

/// Checks that what the daemon finds in its data directory is the user's own before trusting it:
/// another user on the same machine must not be able to plant a directory, a key or a symbolic
/// link that the daemon would then use, follow or write through.
///
/// The rules:
/// 1. A directory (the data directory, `documents/`, a document's directory) belongs to the
///    user and is not writable by group or others.
/// 2. A file is opened with `O_NOFOLLOW` (a symbolic link is an error, never followed) and
///    checked on the open descriptor, so nothing can be swapped in between check and use: a
///    regular file, owned by the user, not writable by group or others, with one link.
/// 3. A secret file (the identity key) is, besides, readable by no one else (mode 0600 or
///    stricter). One that is open to group or others is refused, not re-permissioned: it may
///    already have been copied, and only the user can tell.
enum OwnedFiles {
    /// The user the daemon runs as; what it finds must belong to this uid.
    static var ownUID: uid_t { getuid() }

    /// Throws unless `path` (symbolic links followed, as a data directory may be reached
    /// through one) is a directory of the user's that group and others cannot write to.
    static func checkDirectory(_ path: String, what: String = "the data directory") throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StorageError.system("stat", path) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw StorageError("\(what) \(path) is not a directory") }
        guard info.st_uid == ownUID else {
            throw UntrustedFileError("\(what) \(path) belongs to uid \(info.st_uid), not to you (uid \(ownUID)): another user made it, "
                + "and what it holds cannot be trusted; move it away (or pass --data-dir) and quire makes a new one")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 == 0 else {
            throw UntrustedFileError("\(what) \(path) is writable by group or others (mode \(octal(mode))): another user could plant files "
                + "in it; check what it holds, then run chmod 700 \(path)")
        }
    }

    /// Opens `path` with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`) and checks what it opened;
    /// nil when it does not exist and `flags` does not create it. A symbolic link is an error.
    static func open(_ path: String, flags: Int32, mode: mode_t = 0o600, secret: Bool = false) throws -> Int32? {
        // O_NONBLOCK: a FIFO planted under a file's name must not block the open (loading would
        // hang); `check` then refuses it as not a regular file. No effect on a regular file.
        let fd = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && flags & O_CREAT == 0 { return nil }
            if code == ELOOP {
                throw UntrustedFileError("\(path) is a symbolic link; quire does not follow links in its data directory. "
                    + "Remove it (its target is left alone) and quire makes the file anew")
            }
            throw StorageError.system("open", path, errno: code)
        }
        do {
            try check(fd, path: path, secret: secret)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// The whole content of the file at `path` (checked as `open` does), or nil when it does not
    /// exist; throws, allocating nothing of it, when it holds more than `limit` bytes.
    static func read(_ path: String, secret: Bool = false, limit: Int = .max) throws -> [UInt8]? {
        guard let fd = try open(path, flags: O_RDONLY, secret: secret) else { return nil }
        defer { close(fd) }
        var info = stat()
        return try FileSystem.readAll(fd, path: path, sizeHint: fstat(fd, &info) == 0 ? Int(info.st_size) : 0, limit: limit)
    }

    /// Throws unless the open file `fd` is a regular file of the user's with one link, not
    /// writable by group or others (and, when `secret`, not readable by them either).
    static func check(_ fd: Int32, path: String, secret: Bool) throws {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StorageError.system("stat", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw UntrustedFileError("\(path) is not a regular file; move it away and quire makes the file anew") }
        guard info.st_uid == ownUID else {
            throw UntrustedFileError("\(path) belongs to uid \(info.st_uid), not to you (uid \(ownUID)): another user put it there; "
                + "remove it and quire makes the file anew")
        }
        guard info.st_nlink == 1 else {
            throw UntrustedFileError("\(path) has \(info.st_nlink) hard links: it may be another file of yours linked in; remove it and quire makes the file anew")
        }
        let mode = info.st_mode & 0o7777
        if secret {
            guard mode & 0o077 == 0 else {
                throw UntrustedFileError("\(path) holds a private key but is open to group or others (mode \(octal(mode))), so it may have been copied. "
                    + "Remove it and quire makes a new key (peers that pinned the old fingerprint must pin the new one), "
                    + "or, if you are sure no one read it, run chmod 600 \(path)")
            }
        } else {
            guard mode & 0o022 == 0 else {
                throw UntrustedFileError("\(path) is writable by group or others (mode \(octal(mode))); check it, then run chmod 600 \(path)")
            }
        }
    }

    /// `mode` as four octal digits (`0644`).
    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Something in the data directory that is not the user's own, or is open to others, so the
/// daemon refuses to use it; the description says what was found and how to fix it.
public struct UntrustedFileError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
