import Glibc

/// The daemon's two clocks, shared by every part that reads the time (tests move them).
final class DaemonClock {
    /// Seconds since 1970 (wall clock): when holders were last linked with.
    var wall: () -> Double = { Double(time(nil)) }
    /// Seconds on a monotonic clock: rates.
    var monotonic: () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
