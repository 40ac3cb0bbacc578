import Crypto
import Foundation

/// Where the daemon that holds a data directory takes editors when no `--socket` is given, so
/// that a second `quire` started for the same directory finds it and joins as an editor.
///
/// With `$XDG_RUNTIME_DIR` set (an absolute path to a directory of the user's), the socket is
/// `$XDG_RUNTIME_DIR/quire/editors-<hash>.sock`, in a directory of its own with mode 0700;
/// `<hash>` is the first 16 bytes of the SHA-256 of the data directory's real path, in hex, so
/// each data directory has one place and both processes compute the same. Otherwise it is
/// `editors.sock` in the data directory, which the store checks is the user's and not open to
/// writes by others.
///
/// The daemon's peer socket (`quire peer --stdio` bridges to it, so `ssh host quire peer
/// --stdio` reaches the running daemon) lies next to the editor socket, under the same rules:
/// `$XDG_RUNTIME_DIR/quire/peers-<hash>.sock`, or `peer.sock` in the data directory.
public struct EditorSocketLocation: Sendable {
    /// Where the socket is.
    public let socketPath: String
    /// Where the daemon takes peer links from processes of its user.
    public let peerSocketPath: String
    /// The directory made private (0700) for the socket by `prepare()`; nil when the socket
    /// is in the data directory.
    public let privateDirectory: String?

    public init(dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let runtime = Self.runtimeDirectory(environment) else {
            socketPath = dataDirectory + "/editors.sock"
            peerSocketPath = dataDirectory + "/peer.sock"
            privateDirectory = nil
            return
        }
        let real = realpath(dataDirectory, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? dataDirectory
        let hash = Hex.encode(SHA256.hash(data: Array(real.utf8)).prefix(16))
        privateDirectory = runtime + "/quire"
        socketPath = runtime + "/quire/editors-\(hash).sock"
        peerSocketPath = runtime + "/quire/peers-\(hash).sock"
    }

    /// `$XDG_RUNTIME_DIR` when it is an absolute path to a directory this user owns.
    static func runtimeDirectory(_ environment: [String: String]) -> String? {
        guard let path = environment["XDG_RUNTIME_DIR"], path.hasPrefix("/") else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else { return nil }
        return path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// Makes the private directory (mode 0700) when missing. Throws, changing nothing, when
    /// what is there is not a directory of the user's that only the user can open (a symbolic
    /// link included).
    public func prepare() throws {
        guard let directory = privateDirectory else { return }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw EditorSocketError("cannot make \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw EditorSocketError("cannot check \(directory): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw EditorSocketError("\(directory) is not a directory (a symbolic link, say); quire keeps its editor socket in a directory of its own. Remove it")
        }
        guard info.st_uid == getuid() else {
            throw EditorSocketError("\(directory) belongs to uid \(info.st_uid), not to you (uid \(getuid())); quire does not put its editor socket there")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o077 == 0 else {
            throw EditorSocketError("\(directory) is open to group or others (mode \(OwnedFiles.octal(mode))); run chmod 700 \(directory)")
        }
    }
}
