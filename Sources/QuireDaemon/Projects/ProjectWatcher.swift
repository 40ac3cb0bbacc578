import Foundation
import Glibc
import Logging
import QuireProject

/// Tells when something changed in a project's folders (Linux inotify): the service scans the
/// folder then (a periodic re-scan is the backstop for what a watch misses: folders beyond the
/// watch bound, an overflowing queue). What the disk passes of this daemon did themselves is not
/// a change to read: their temporary files (`DiskProject.passTemporaryPrefix`), the renames of
/// those into place (matched by the rename's cookie), the files a pass moved or removed and the
/// folders it removed (`expect`, each matched by its folder and name, a move's arrival by its
/// cookie), and the folders a pass made and found holding only what it wrote (`expectMade`).
/// A pass reads the queue as it goes (`drain`), so a pass of thousands of files does not
/// overflow it.
///
/// Guarantees: never blocks (the descriptor is non-blocking and only read when asked); safe to
/// call from the loop and from a pass's queue (one lock); watches at most `maximumWatches`
/// folders; the descriptor closes with the watcher; any event it cannot tell for a pass's own
/// (another name, another process's rename or removal, an overflowing queue) counts as a change.
final class ProjectWatcher: @unchecked Sendable {
    static let maximumWatches = 4096
    private let root: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var watched: Set<String> = []
    /// The folder of each watch descriptor.
    private var folders: [Int32: String] = [:]
    /// What the passes' temporary files are named from.
    private let ownPrefix = Array(DiskProject.passTemporaryPrefix.utf8)
    /// The cookies of files the passes renamed away, whose arrival is theirs too.
    private var ownCookies: Set<UInt32> = []
    /// Folders a pass made that held only what it wrote once watched: their creation is its own.
    private var madeFolders: Set<String> = []
    /// Folders whose creation was read before the pass that made them was recorded (`drain`):
    /// each must be one of `madeFolders` by the next `takeEvents`.
    private var createdFolders: Set<String> = []
    /// The removals and moves away the pass in flight makes (`expect`): folder, name, what.
    private var expected: [Expected: Int] = [:]
    /// Folders the pass in flight removes: the end of their watch is its own.
    private var expectedGone: Set<String> = []
    /// Whether an event read so far was not a pass's own.
    private var foreign = false
    /// The first events since the last `takeEvents` that were not a pass's own (at most 8).
    private var foreignEvents: [ForeignEvent] = []
    /// Those the last `takeEvents` that said "changed" read: why the project is scanned.
    private var lastForeign: [ForeignEvent] = []

    /// An event that was not a disk pass's own: its inotify mask, and the name it carried
    /// (relative to the project root; empty for the queue's overflow). For the log and tests.
    struct ForeignEvent: Equatable, CustomStringConvertible {
        let mask: UInt32
        let path: String
        var description: String {
            let kinds: [(Int32, String)] = [(IN_Q_OVERFLOW, "overflow"), (IN_CREATE, "create"), (IN_DELETE, "delete"), (IN_MODIFY, "modify"),
                                            (IN_CLOSE_WRITE, "close-write"), (IN_MOVED_FROM, "moved-from"), (IN_MOVED_TO, "moved-to"),
                                            (IN_ATTRIB, "attrib"), (IN_IGNORED, "watch-ended")]
            let named = kinds.filter { mask & UInt32($0.0) != 0 }.map(\.1).joined(separator: "+")
            return "\(named.isEmpty ? "mask \(mask)" : named) \(DisplayText.clean(path, limit: 200))"
        }
    }

    private struct Expected: Hashable {
        let folder: String
        let name: String
        let kind: Kind
        enum Kind { case removed, movedAway, folderRemoved }
    }

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
    var watchesAll: Bool {
        lock.lock()
        defer { lock.unlock() }
        return allWatched
    }
    private var allWatched = true

    /// Watches the folders (relative to the root, "" for the root) not watched yet; returns those
    /// it started watching now.
    @discardableResult
    func watch(folders wanted: Set<String>) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DONT_FOLLOW | IN_ONLYDIR)
        var added: [String] = []
        for folder in wanted.sorted() where !watched.contains(folder) {
            guard watched.count < Self.maximumWatches else {
                allWatched = false
                break
            }
            let path = folder.isEmpty ? root : root + "/" + folder
            let watch = inotify_add_watch(descriptor, path, mask)
            if watch >= 0 {
                watched.insert(folder)
                folders[watch] = folder
                added.append(folder)
            } else {
                allWatched = false
            }
        }
        return added
    }

    /// `folders` were made by a disk pass and found holding only what it wrote: the events of
    /// their creation are its own. Forgotten at the next `takeEvents` that does not see them
    /// (their parent was not watched, or they came before).
    func expectMade(_ made: some Sequence<String>) {
        lock.lock()
        defer { lock.unlock() }
        madeFolders.formUnion(made)
        if madeFolders.count > Self.maximumWatches { madeFolders = [] }
    }

    /// A disk pass is about to carry out `actions`: the removals and moves away among them are
    /// its own (their writes are told by their temporary names). Held until `passDone`.
    func expect(_ actions: [ProjectWriter.Action]) {
        lock.lock()
        defer { lock.unlock() }
        func add(_ path: ProjectPath, _ kind: Expected.Kind) {
            expected[Expected(folder: path.ancestors.last ?? "", name: String(path.name), kind: kind), default: 0] += 1
        }
        for action in actions {
            switch action {
            case .write: break
            case .remove(let path): add(path, .removed)
            case .rename(let from, _): add(from, .movedAway)
            case .removeFolderIfEmpty(let path):
                add(path, .folderRemoved)
                expectedGone.insert(path.string)
            }
        }
    }

    /// The pass in flight is done with the disk: its events are read now (every one was queued
    /// before the call that made it returned), and what it was expected to do is forgotten, so
    /// a later removal or move of the same name by anyone else is a change.
    func passDone() {
        lock.lock()
        defer { lock.unlock() }
        readQueued()
        expected = [:]
        expectedGone = []
    }

    /// Reads and judges the queued events now (a long pass calls it as it goes, so its events
    /// do not overflow the queue); what they told is kept for `takeEvents`.
    func drain() {
        lock.lock()
        defer { lock.unlock() }
        readQueued()
    }

    /// What happened since the last call: whether anything did that is not the disk passes' own
    /// (the queued events are read and dropped).
    func takeEvents() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let any = readQueued()
        if any || !createdFolders.isEmpty {
            if !createdFolders.isSubset(of: madeFolders) { foreign = true }
            createdFolders = []
            madeFolders = []
        }
        if ownCookies.count > 4096 { ownCookies = [] }
        let changed = foreign
        foreign = false
        if changed { lastForeign = foreignEvents }
        foreignEvents = []
        return changed
    }

    /// Why the last `takeEvents` that said so saw a change: the first events (at most 8) that
    /// were not a disk pass's own.
    var lastChange: [ForeignEvent] {
        lock.lock()
        defer { lock.unlock() }
        return lastForeign
    }

    /// Reads every queued event, judging each (under the lock); whether there was any.
    @discardableResult
    private func readQueued() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            any = true
            if !allOwn(buffer[..<count]) { foreign = true }
        }
        return any
    }

    /// Whether every event in `bytes` (whole `inotify_event`s) is a disk pass's own; each is
    /// looked at (a watch's end is forgotten whoever caused it).
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
            let folder = folders[watch] ?? ""   // before `isOwn`, which forgets an ended watch's
            if !isOwn(watch: watch, mask: mask, cookie: cookie, name: name) {
                own = false
                if foreignEvents.count < 8 {
                    foreignEvents.append(ForeignEvent(mask: mask, path: Self.path(folder, String(decoding: name, as: UTF8.self))))
                }
            }
        }
        return own
    }

    private func isOwn(watch: Int32, mask: UInt32, cookie: UInt32, name: ArraySlice<UInt8>) -> Bool {
        guard mask & UInt32(IN_Q_OVERFLOW) == 0, let folder = folders[watch] else { return false }
        if mask & UInt32(IN_IGNORED) != 0 {
            // The folder's watch ended (it was removed or moved away): watched again if it comes back.
            folders[watch] = nil
            watched.remove(folder)
            return expectedGone.contains(folder)
        }
        guard !name.isEmpty else { return false }
        if name.starts(with: ownPrefix) {
            if mask & UInt32(IN_MOVED_FROM) != 0 { ownCookies.insert(cookie) }
            return true
        }
        if mask & UInt32(IN_MOVED_TO) != 0 { return ownCookies.remove(cookie) != nil }
        let text = String(decoding: name, as: UTF8.self)
        if mask & UInt32(IN_MOVED_FROM) != 0 {
            guard take(Expected(folder: folder, name: text, kind: .movedAway)) else { return false }
            ownCookies.insert(cookie)
            return true
        }
        if mask & UInt32(IN_DELETE) != 0 {
            return take(Expected(folder: folder, name: text, kind: mask & UInt32(IN_ISDIR) != 0 ? .folderRemoved : .removed))
        }
        if mask & UInt32(IN_CREATE) != 0, mask & UInt32(IN_ISDIR) != 0 {
            let path = Self.path(folder, text)
            if madeFolders.remove(path) == nil { createdFolders.insert(path) }
            return true
        }
        return false
    }

    /// `name` in `folder`, relative to the root ("" for either: the other alone).
    private static func path(_ folder: String, _ name: String) -> String {
        folder.isEmpty || name.isEmpty ? folder + name : folder + "/" + name
    }

    /// Takes one expected event; whether it was expected.
    private func take(_ event: Expected) -> Bool {
        guard let count = expected[event] else { return false }
        expected[event] = count > 1 ? count - 1 : nil
        return true
    }
}
