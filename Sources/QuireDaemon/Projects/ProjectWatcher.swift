import Glibc
import Logging
import QuireProject

/// Tells when something changed in a project's folders (Linux inotify): the service scans the
/// folder then (a periodic re-scan is the backstop for what a watch misses: folders beyond the
/// watch bound, an overflowing queue). What the disk passes of this daemon did themselves is not
/// a change to read: their temporary files (`DiskProject.passTemporaryPrefix`), the renames of
/// those into place (matched by the rename's cookie), and the folders a pass made and found
/// holding only what it wrote (`expectMade`).
///
/// Guarantees: never blocks (the descriptor is non-blocking and only read when asked); watches
/// at most `maximumWatches` folders; the descriptor closes with the watcher; any event it cannot
/// tell for a pass's own (another name, another process's rename, an overflowing queue) counts
/// as a change.
final class ProjectWatcher {
    static let maximumWatches = 4096
    private let root: String
    private let descriptor: Int32
    private var watched: Set<String> = []
    /// The folder of each watch descriptor.
    private var folders: [Int32: String] = [:]
    /// What the passes' temporary files are named from.
    private let ownPrefix = Array(DiskProject.passTemporaryPrefix.utf8)
    /// The cookies of the passes' temporary files renamed away, whose arrival is theirs too.
    private var ownCookies: Set<UInt32> = []
    /// Folders a pass made that held only what it wrote once watched: their creation is its own.
    private var madeFolders: Set<String> = []

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

    /// Watches the folders (relative to the root, "" for the root) not watched yet; returns those
    /// it started watching now.
    @discardableResult
    func watch(folders wanted: Set<String>) -> [String] {
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DONT_FOLLOW | IN_ONLYDIR)
        var added: [String] = []
        for folder in wanted.sorted() where !watched.contains(folder) {
            guard watched.count < Self.maximumWatches else {
                watchesAll = false
                break
            }
            let path = folder.isEmpty ? root : root + "/" + folder
            let watch = inotify_add_watch(descriptor, path, mask)
            if watch >= 0 {
                watched.insert(folder)
                folders[watch] = folder
                added.append(folder)
            } else {
                watchesAll = false
            }
        }
        return added
    }

    /// `folders` were made by a disk pass and found holding only what it wrote: the events of
    /// their creation are its own. Forgotten at the next `takeEvents` that does not see them
    /// (their parent was not watched, or they came before).
    func expectMade(_ made: some Sequence<String>) {
        madeFolders.formUnion(made)
        if madeFolders.count > Self.maximumWatches { madeFolders = [] }
    }

    /// What happened since the last call: whether anything did that is not the disk passes' own
    /// (the queued events are read and dropped).
    func takeEvents() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var foreign = false
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            any = true
            if !foreign { foreign = !allOwn(buffer[..<count]) }
        }
        if any { madeFolders = [] }
        if ownCookies.count > 4096 { ownCookies = [] }
        return foreign
    }

    /// Whether every event in `bytes` (whole `inotify_event`s) is a disk pass's own.
    private func allOwn(_ bytes: ArraySlice<UInt8>) -> Bool {
        let header = 16   // wd, mask, cookie, len
        var offset = bytes.startIndex
        var own = true
        while offset + header <= bytes.endIndex {
            let (watch, mask, cookie, length) = bytes.withUnsafeBytes { raw -> (Int32, UInt32, UInt32, Int) in
                let base = offset - bytes.startIndex
                return (raw.loadUnaligned(fromByteOffset: base, as: Int32.self), raw.loadUnaligned(fromByteOffset: base + 4, as: UInt32.self),
                        raw.loadUnaligned(fromByteOffset: base + 8, as: UInt32.self), Int(raw.loadUnaligned(fromByteOffset: base + 12, as: UInt32.self)))
            }
            let nameStart = offset + header
            guard length >= 0, nameStart + length <= bytes.endIndex else { return false }
            let name = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
            offset = nameStart + length
            if own { own = isOwn(watch: watch, mask: mask, cookie: cookie, name: name) }
        }
        return own
    }

    private func isOwn(watch: Int32, mask: UInt32, cookie: UInt32, name: ArraySlice<UInt8>) -> Bool {
        guard mask & UInt32(IN_Q_OVERFLOW) == 0, let folder = folders[watch], !name.isEmpty else { return false }
        if name.starts(with: ownPrefix) {
            if mask & UInt32(IN_MOVED_FROM) != 0 { ownCookies.insert(cookie) }
            return true
        }
        if mask & UInt32(IN_MOVED_TO) != 0 { return ownCookies.remove(cookie) != nil }
        if mask & UInt32(IN_CREATE) != 0, mask & UInt32(IN_ISDIR) != 0 {
            let path = folder.isEmpty ? String(decoding: name, as: UTF8.self) : folder + "/" + String(decoding: name, as: UTF8.self)
            return madeFolders.remove(path) != nil
        }
        return false
    }
}
