import Glibc
import Logging

/// Tells when something changed in a project's folders (Linux inotify): the service scans the
/// folder then (a periodic re-scan is the backstop for what a watch misses: folders beyond the
/// watch bound, an overflowing queue).
///
/// Guarantees: never blocks (the descriptor is non-blocking and only read when asked); watches
/// at most `maximumWatches` folders; the descriptor closes with the watcher.
final class ProjectWatcher {
    static let maximumWatches = 4096
    private let root: String
    private let descriptor: Int32
    private var watched: Set<String> = []

    init?(root: String, logger: Logger) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            logger.warning("project folder \(root): not watched (inotify: \(String(cString: strerror(errno)))); re-scanned every few seconds")
            return nil
        }
        self.root = root
        self.descriptor = descriptor
        watch(folders: [""])
    }

    deinit { close(descriptor) }

    /// Whether every folder asked for is watched (none past the bound, none refused).
    private(set) var watchesAll = true

    /// Watches the folders (relative to the root, "" for the root) not watched yet.
    func watch(folders: Set<String>) {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DONT_FOLLOW | IN_ONLYDIR)
        for folder in folders.sorted() where !watched.contains(folder) {
            guard watched.count < Self.maximumWatches else {
                watchesAll = false
                return
            }
            let path = folder.isEmpty ? root : root + "/" + folder
            if inotify_add_watch(descriptor, path, mask) >= 0 { watched.insert(folder) } else { watchesAll = false }
        }
    }

    /// Whether anything happened since the last call (the queued events are read and dropped).
    func takeEvents() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            any = true
        }
        return any
    }
}
