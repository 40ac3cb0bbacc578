import Glibc
import QuireDaemon

/// A connected Unix socket to a daemon's editor socket, with blocking reads and writes.
///
/// Guarantees: a socket exists only once the kernel said the daemon at the other end runs as
/// this process's user (`SO_PEERCRED`), since what `quire share` sends and is sent back (the
/// join line holds the project's secret) must not go to anyone else; writes never raise SIGPIPE;
/// a read returns at most `chunkBytes`.
final class DaemonSocket: @unchecked Sendable {
    static let chunkBytes = 1 << 16
    private let descriptor: Int32

    /// Connects to `path`; throws `ConsoleError.cannotConnect` (the daemon is not there, or not
    /// listening yet) or `.notYourDaemon`.
    init(path: String) throws(ConsoleError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity, !pathBytes.contains(0) else {
            throw .cannotConnect(path: path, reason: "a socket path has 1 to \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: path, reason: Self.lastError()) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let reason = Self.lastError()
            close(fd)
            throw .cannotConnect(path: path, reason: reason)
        }
        let uid = EditorCredentials.peerUID(ofDescriptor: fd)
        guard uid == getuid() else {
            close(fd)
            throw .notYourDaemon(path: path, uid: uid)
        }
        descriptor = fd
    }

    /// Writes all of `bytes`; false when the daemon has gone.
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    /// The next bytes the daemon sent (at most `chunkBytes`); empty at the end of the stream or
    /// on an error.
    func read() -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: Self.chunkBytes)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            return n > 0 ? Array(chunk[0..<n]) : []
        }
    }

    /// Ends both directions, so a thread blocked in `read()` returns.
    func shutDown() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    deinit {
        close(descriptor)
    }

    static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
