#if canImport(Glibc)
import Glibc
#endif

/// What kind of file a descriptor is, as far as SwiftNIO's pipe channel cares: it works with
/// pipes, sockets and terminals, and refuses (or traps on) regular files and devices such as
/// `/dev/null`, which epoll does not accept.
enum Descriptors {
    static func isPollable(_ fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        switch info.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return true
        case S_IFCHR: return isatty(fd) == 1
        default: return false
        }
    }
}
