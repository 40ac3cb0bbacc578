import Dispatch
import Foundation

/// Gives new documents their own files off the reply path. A new document's first records go
/// into the current pack (`DocumentPack`: one file, one sync for a whole burst; under `.sync` at
/// the commit, `flush`, so one taken back before never costs the pack), which is what makes it
/// durable; a thread of its own then makes each document's directory, `document.json`
/// and first segment, synced before they are renamed into place, syncs the documents directory,
/// and removes a pack once every document in it has its own files.
///
/// What makes it safe: the store touches a packed document's files only after `claim`: a
/// document not started yet is taken back (the store makes it at once and syncs it at its next
/// commit, then `release`s it), one being made is waited for. A pack is removed only when none
/// of its documents is pending, under the lock that orders appends, so a document is always in a
/// pack on disk or in its own durable files. Not thread-safe for the store's side: the store calls
/// it from one thread; the lock orders that thread and the maker's.
final class DocumentFilesMaker {
    /// A document to give its own files: its records are in `pack`, at `ranges` in order, or,
    /// until the next commit writes them there (`flush`), in `buffered`.
    struct Job: @unchecked Sendable {
        let id: UInt64
        let uri: String
        let directory: String
        var pack: DocumentPack?
        var ranges: [(offset: Int, length: Int)] = []
        /// Kept as written, one array per write: appending a binding to a document's first
        /// records would copy them into a buffer grown to twice their size (2,000 shared files
        /// held 42 MB here instead of 21 MB until the commit).
        var buffered: [[UInt8]] = []

        /// Its records, read back from the pack (or as buffered).
        func records() throws -> [UInt8] {
            guard let pack else { return Array(buffered.joined()) }
            var bytes: [UInt8] = []
            for range in ranges { bytes += try pack.read(offset: range.offset, length: range.length) }
            return bytes
        }
    }

    /// What `claim` found for a document.
    enum Claim {
        /// Not packed here (loaded from its directory, or released): its files are its own.
        case notPacked
        /// Given its own files, durably, by the maker's thread.
        case made
        /// Taken back before it was made: the caller makes its files from `records` and syncs them.
        case yours(records: [UInt8])
    }

    struct PackState {
        let pack: DocumentPack
        /// Every document created in it (a discard is recorded in it while it is on disk).
        var members: Set<UInt64> = []
        /// Documents whose own files are not durable yet: the pack stays while any is.
        var pending: Set<UInt64> = []
    }

    let packsPath: String
    let documentsPath: String
    let condition = NSCondition()
    let queue = DispatchQueue(label: "quire.storage.own-files")
    let syncs = ParallelSyncs(width: DocumentStore.parallelSyncs)
    // Under `condition`:
    /// Queued documents in creation order (some taken back since: not in `queued`).
    var waiting: [UInt64] = []
    var waitingStart = 0
    var queued: [UInt64: Job] = [:]
    /// Created deferred: their records wait for `flush()`.
    var unflushed: [UInt64] = []
    var inProgress: Set<UInt64> = []
    var made: Set<UInt64> = []
    var failed: [UInt64: Job] = [:]
    var packs: [Int: PackState] = [:]
    var packOf: [UInt64: Int] = [:]
    var current: DocumentPack?
    var nextNumber: Int
    var scheduled = false
    /// When the store last created a document, wrote to one or committed (`DispatchTime` nanoseconds).
    var lastCreated: UInt64 = 0
    /// `finish()` waits: the thread starts at once instead of waiting for a quiet moment.
    var hurry = false
    /// Bulk writes of project files under way (`holdWhile`): the thread starts no round meanwhile.
    var held = 0
    /// No round starts before this (`DispatchTime` nanoseconds; `holdFor`).
    var heldUntil: UInt64 = 0
    /// The thread starts a round only once the store has created no document, written to none
    /// and made no commit for this long: a burst (a project opened, shared or joined) is answered
    /// first, and a document's records written right after it is created still find it in its
    /// pack. Not shorter: the thread's inodes cost CPU in the kernel on a disk where many were
    /// freed lately (ext4's `recently_deleted`), its syncs slow the commits' syncs (they wait for
    /// the same journal), and its `mkdir`s hold the documents directory; a peer that joins a
    /// project just shared, or a joined project whose files are still being written (their
    /// bindings are store writes), keeps it waiting (protocol/decisions/document-packs.md).
    static let quietNanoseconds: UInt64 = 1_000_000_000
    /// A pack was created since the last commit: the packs directory's entry waits for its sync.
    var packsDirectoryUnsynced = false
    /// Documents per round of the maker's thread (their syncs run together).
    static let roundSize = 32
    /// The current pack is kept below this size when none of its documents waits for it.
    static let keptPackBytes = 4 << 20
    /// A pack this large takes no more documents (it goes once they all have their own files).
    static let sealedPackBytes = 256 << 20

    /// `sealedPackBytes`, smaller in tests.
    let sealedBytes: Int

    init(packsPath: String, documentsPath: String, firstNumber: Int, sealedBytes: Int = DocumentFilesMaker.sealedPackBytes) {
        self.sealedBytes = sealedBytes
        self.packsPath = packsPath
        self.documentsPath = documentsPath
        nextNumber = firstNumber
    }

    // MARK: The store's side

    /// The store wrote to a document: the thread waits for another quiet moment.
    func noteActivity() {
        condition.lock()
        lastCreated = DispatchTime.now().uptimeNanoseconds
        condition.unlock()
    }

    /// Runs `body` (the writer's pass over a project folder) with the thread starting no round
    /// meanwhile, and a quiet moment counted from its end: its inodes and syncs would share the
    /// disk with the pass's (2,000 documents' own files during a join took its syncs from
    /// milliseconds to tens of them). Documents stay durable in their packs until then.
    func holdWhile<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        held += 1
        condition.unlock()
        defer {
            condition.lock()
            held -= 1
            lastCreated = DispatchTime.now().uptimeNanoseconds
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// The thread starts no round for the next `nanoseconds` (a join still writing its files
    /// renews this at each pass, so a long pass or a slow arrival does not let it in).
    func holdFor(nanoseconds: UInt64) {
        condition.lock()
        heldUntil = max(heldUntil, DispatchTime.now().uptimeNanoseconds &+ nanoseconds)
        condition.unlock()
    }

    /// Queues document `id` to be given its own files. Its first `records` go into the current
    /// pack at once, or, when `deferred` (`.sync`: nothing tells of it before the commit), at the
    /// next `flush()` unless the store takes it back before (`claim`): a document whose own files
    /// the same read needs (claimed to be snapshotted) never costs the pack anything.
    func create(id: UInt64, uri: String, directory: String, records: [UInt8], deferred: Bool) throws {
        condition.lock()
        var removedLater: [DocumentPack] = []
        defer {
            condition.unlock()
            finishRemoving(removedLater)
        }
        waiting.append(id)
        lastCreated = DispatchTime.now().uptimeNanoseconds
        var job = Job(id: id, uri: uri, directory: directory)
        if deferred {
            job.buffered = [records]
            unflushed.append(id)
        } else {
            try write(&job, buffered: [records], removing: &removedLater)
        }
        queued[id] = job
        schedule()
    }

    /// Writes the records of the documents created deferred and not taken back into the
    /// current pack (the commit does, before it syncs the pack).
    func flush() throws {
        condition.lock()
        var removedLater: [DocumentPack] = []
        defer {
            condition.unlock()
            finishRemoving(removedLater)
        }
        for (index, id) in unflushed.enumerated() {
            guard var job = queued[id], job.pack == nil else { continue }
            do { try write(&job, buffered: job.buffered, removing: &removedLater) } catch {
                unflushed.removeFirst(index)
                throw error
            }
            job.buffered = []
            queued[id] = job
        }
        unflushed = []
        if !waiting.isEmpty { schedule() }
    }

    /// Puts `job`'s first records (`buffered`, in order) in the current pack, a new one when
    /// there is none (under the lock).
    private func write(_ job: inout Job, buffered: [[UInt8]], removing removedLater: inout [DocumentPack]) throws {
        if let full = current, full.size >= sealedBytes {
            // Sealed: removed once its documents have their own files; a new one takes the next.
            current = nil
            if packs[full.number]?.pending.isEmpty == true, let pack = remove(full.number) { removedLater.append(pack) }
        }
        if current == nil || current?.isRemoved == true {
            let pack = try DocumentPack(in: packsPath, number: nextNumber)
            nextNumber += 1
            packs[pack.number] = PackState(pack: pack)
            current = pack
            packsDirectoryUnsynced = true
        }
        guard let pack = current else { return }
        let first = buffered.first ?? []
        let offset = try pack.appendCreated(id: job.id, uri: job.uri, records: first)
        packs[pack.number]?.members.insert(job.id)
        packs[pack.number]?.pending.insert(job.id)
        packOf[job.id] = pack.number
        job.pack = pack
        job.ranges = [(offset, first.count)]
        // Later records as `appendIfQueued` puts them in a pack: part of its first segment.
        for records in buffered.dropFirst() { job.ranges.append((try pack.appendRecords(id: job.id, records: records), records.count)) }
    }

    /// Appends `records` (framed log records) of document `id` to its pack when the maker's
    /// thread has not started making it: they become part of its first segment. False when it
    /// has (or it is not packed): the store then claims it and writes to its own files.
    func appendIfQueued(_ id: UInt64, records: [UInt8]) throws -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard var job = queued[id] else { return false }
        if let pack = job.pack {
            guard !pack.isRemoved else { return false }
            job.ranges.append((try pack.appendRecords(id: id, records: records), records.count))
        } else {
            job.buffered.append(records)
        }
        queued[id] = job
        return true
    }

    /// Whether the current pack or its directory entry waits for a sync.
    var hasUnsyncedPack: Bool {
        condition.lock()
        defer { condition.unlock() }
        // Not only the current pack: one sealed by this commit's flush, or an older one a queued
        // document's records were appended to, waits for its sync too.
        return packsDirectoryUnsynced || packs.values.contains { $0.pack.hasUnsyncedData } || !unflushed.isEmpty
    }

    /// The commit's steps for packs: the data of every pack appended to since (the current one,
    /// one sealed meanwhile, an older one holding a queued document), and the packs directory
    /// when a pack was created since the last commit. `succeeded()` is called once they all did.
    func syncSteps() -> (steps: [() throws -> Void], succeeded: () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        var steps: [() throws -> Void] = []
        let unsyncedPacks = packs.keys.sorted().compactMap { packs[$0]?.pack }.filter(\.hasUnsyncedData)
        for pack in unsyncedPacks { steps.append(pack.syncStep()) }
        let directory = packsDirectoryUnsynced
        if directory {
            let path = packsPath
            steps.append { try FileSystem.syncDirectory(path) }
        }
        return (steps, { [self] in
            condition.lock()
            defer { condition.unlock() }
            lastCreated = DispatchTime.now().uptimeNanoseconds
            for pack in unsyncedPacks { pack.syncSucceeded() }
            if directory { packsDirectoryUnsynced = false }
        })
    }

    /// Takes document `id` for the store to touch: waits while the maker's thread makes it.
    func claim(_ id: UInt64) throws -> Claim {
        condition.lock()
        while inProgress.contains(id) { condition.wait() }
        if made.remove(id) != nil {
            condition.unlock()
            return .made
        }
        var job = failed.removeValue(forKey: id)
        if job == nil { job = queued.removeValue(forKey: id) }
        condition.unlock()
        guard let job else { return .notPacked }
        return .yours(records: try job.records())
    }

    /// The documents the maker's thread has given their own files since the last call.
    func takeMade() -> Set<UInt64> {
        condition.lock()
        defer { condition.unlock() }
        let taken = made
        made = []
        return taken
    }

    /// Documents the store made itself (`claim` gave them back) are durable now: their packs
    /// no longer wait for them.
    func release(_ ids: Set<UInt64>) {
        guard !ids.isEmpty else { return }
        condition.lock()
        let removed = ids.compactMap { settle($0) }
        condition.unlock()
        finishRemoving(removed)
    }

    /// Document `id` is going (claimed first): its pack, while on disk, records the discard, so
    /// loading does not bring it back.
    func discard(_ id: UInt64) throws {
        condition.lock()
        var removed: [DocumentPack] = []
        defer {
            condition.unlock()
            finishRemoving(removed)
        }
        guard let number = packOf[id], let state = packs[number] else { return }
        if !state.pack.isRemoved { try state.pack.appendDropped(id: id) }
        if let pack = settle(id) { removed.append(pack) }
    }

    /// Waits until every queued document has its own files (or failed to), and for nothing
    /// else; packs whose documents are all made are removed by then.
    func finish() {
        try? flush()   // one that fails stays in memory only, as it would have at a failed commit
        condition.lock()
        hurry = true
        condition.broadcast()
        while !inProgress.isEmpty || scheduled || queued.values.contains(where: { $0.pack != nil }) { condition.wait() }
        hurry = false
        // The current pack, kept for more documents, goes too when none waits for it.
        let idle = packs.filter { $0.value.pending.isEmpty }.keys.compactMap { remove($0) }
        condition.unlock()
        finishRemoving(idle)
    }
}
