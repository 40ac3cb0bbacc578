import Glibc

/// Keeps a crash of `quire` from leaving its memory on disk.
///
/// A core file holds the daemon's secrets (project secrets, its key, join lines) and, where the
/// system's `core_pattern` is a plain name, lands in the working folder: a shared project's
/// folder. Setting the core size limit to 0 at start keeps Swift's own crash backtrace on
/// stderr (unlike `PR_SET_DUMPABLE`, which would also keep debuggers out).
enum CoreDumps {
    /// Sets this process's core file size limit (soft and hard) to 0.
    static func forbid() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
    }
}
