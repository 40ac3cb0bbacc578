import Foundation

/// The commit: what makes every logged operation and new document durable, and what waits
/// for it (`holdsOutput`); and taking a packed document's files before touching them.
extension DocumentStore {
    /// Whether output must wait for `commit()`: edits or new documents not yet on stable storage
    /// under `.sync`.
    var holdsOutput: Bool {
        durability == .sync && (!unsynced.isEmpty || documentsDirectoryUnsynced || maker.hasUnsyncedPack)
    }

    /// Puts every logged operation, and every document created since the last commit, on stable
    /// storage: the current pack, each written document's files and directory, then the
    /// documents directory once.
    public func commit() {
        for id in maker.takeMade() { files[id]?.madeElsewhere() }
        // New documents not taken back since they were created go into the pack now (`.sync`).
        attempt("write new documents to a pack in \(packsPath)") { try maker.flush() }
        let packs = maker.syncSteps()
        guard !unsynced.isEmpty || documentsDirectoryUnsynced || !packs.steps.isEmpty else { return }
        let ids = unsynced.sorted()
        unsynced = []
        // Every file's writeback started before the first sync waits, so they share journal commits.
        if ids.count > 1 { for id in ids { files[id]?.startSync() } }
        // Every file's sync runs at once (each on its own file: `ParallelSyncs`), so their cache
        // flushes are shared; each document's outcome is then taken here, in order.
        let pending = ids.compactMap { files[$0] }.filter { !$0.isUnmade }
        var steps: [() throws -> Void] = packs.steps
        var stepOwners: [Int] = Array(repeating: pending.count, count: packs.steps.count)
        for (index, documentFiles) in pending.enumerated() {
            for step in documentFiles.syncSteps() {
                steps.append(step)
                stepOwners.append(index)
            }
        }
        var errors = [Error?](repeating: nil, count: pending.count + 1)
        for (owner, error) in zip(stepOwners, syncs.run(steps)) where errors[owner] == nil { errors[owner] = error }
        attempt("sync the pack of new documents in \(packsPath)") {
            if let error = errors[pending.count] { throw error }
            packs.succeeded()
        }
        for (documentFiles, error) in zip(pending, errors) {
            attempt("sync \(documentFiles.uri)") {
                if let error { throw error }
                documentFiles.syncSucceeded()
            }
        }
        if documentsDirectoryUnsynced {
            documentsDirectoryUnsynced = false
            attempt("sync \(documentsPath)") { try FileSystem.syncDirectory(documentsPath) }
        }
        // Documents made here from their pack are durable in their own files now.
        if failure == nil {
            maker.release(madeSinceCommit)
            madeSinceCommit = []
        }
    }

    /// Waits until every new document has its own files (their packs are removed by then, or
    /// kept for the next load when a document could not be made): what letting the store go
    /// does too. For a benchmark's figure, and for tests.
    public func finishOwnFiles() {
        maker.finish()
        for id in maker.takeMade() { files[id]?.madeElsewhere() }
    }

    /// Document `id`'s files, made first when they are still only in a pack (`makeOwnFiles`).
    /// Nil when the store has no such document or cannot make them (the store stops then).
    /// For writes that replace whole files (a snapshot, which folds the sharing and binding
    /// records too); log records of a packed document (its edits, sharing, binding, a peer's
    /// state) go to its pack while the maker's thread has not started on it.
    func settledFiles(_ id: UInt64) -> DocumentFiles? {
        guard let documentFiles = files[id] else { return nil }
        guard documentFiles.isUnmade else { return documentFiles }
        attempt("make the files of \(documentFiles.uri)") { try makeOwnFiles(documentFiles) }
        return documentFiles.isUnmade ? nil : documentFiles
    }

    /// Runs `body` (a bulk write of project files) while the files maker starts no round
    /// (`DocumentFilesMaker.holdWhile`).
    func holdingOwnFiles<T>(_ body: () throws -> T) rethrows -> T {
        try maker.holdWhile(body)
    }

    /// Keeps the files maker from starting a round for `seconds` (a join still writing its files).
    func deferOwnFiles(seconds: Double) {
        maker.holdFor(nanoseconds: UInt64(max(0, min(seconds, 3600)) * 1e9))
    }

    /// Makes a packed document's own files: by the maker's thread (waited for when under way)
    /// or here at once from its pack (synced at the next commit, which then releases the pack).
    func makeOwnFiles(_ documentFiles: DocumentFiles) throws {
        switch try maker.claim(documentFiles.id) {
        case .made:
            documentFiles.madeElsewhere()
        case .yours(let records):
            try documentFiles.make(records: records)
            unsynced.insert(documentFiles.id)
            documentsDirectoryUnsynced = true
            madeSinceCommit.insert(documentFiles.id)
        case .notPacked:
            throw StorageError("it is in no pack")
        }
    }

    /// A log record of packed document `documentFiles`: into its pack while the maker's thread
    /// has not started on it (true), else its files are made first (false: write it there).
    func writePacked(_ record: [UInt8], of documentFiles: DocumentFiles) throws -> Bool {
        if try maker.appendIfQueued(documentFiles.id, records: record) { return true }
        try makeOwnFiles(documentFiles)
        return false
    }
}
