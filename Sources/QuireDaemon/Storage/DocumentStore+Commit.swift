import Foundation

/// The commit: what makes every logged operation and new document durable, and what waits
/// for it (`holdsOutput`); and waiting for the files of new documents (`DocumentMaker`).
extension DocumentStore {
    /// Whether output must wait for `commit()`: edits not yet on stable storage under `.sync`.
    var holdsOutput: Bool { durability == .sync && (!unsynced.isEmpty || documentsDirectoryUnsynced) }

    /// Puts every logged operation, and every document created since the last commit, on stable
    /// storage: each document's files and directory, then the documents directory once.
    public func commit() {
        guard !unsynced.isEmpty || documentsDirectoryUnsynced else { return }
        // New documents' files are all written first; one that could not be is not synced.
        maker.start()
        settleMakes()
        let ids = unsynced.sorted()
        unsynced = []
        // Every file's writeback started before the first sync waits, so they share journal commits.
        if ids.count > 1 { for id in ids { files[id]?.startSync() } }
        // Every file's sync runs at once (each on its own file: `ParallelSyncs`), so their cache
        // flushes are shared; each document's outcome is then taken here, in order.
        let pending = ids.compactMap { files[$0] }.filter { !$0.isUnmade }
        var steps: [() throws -> Void] = []
        var stepOwners: [Int] = []
        for (index, documentFiles) in pending.enumerated() {
            for step in documentFiles.syncSteps() {
                steps.append(step)
                stepOwners.append(index)
            }
        }
        var errors = [Error?](repeating: nil, count: pending.count)
        for (owner, error) in zip(stepOwners, syncs.run(steps)) where errors[owner] == nil { errors[owner] = error }
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
    }

    /// Document `id`'s files, once no other thread is writing them (`DocumentMaker`).
    func settledFiles(_ id: UInt64) -> DocumentFiles? {
        if maker.isInFlight(id) { settleMakes() }
        return files[id]
    }

    /// Waits for the new documents' files being written; a document that could not be made
    /// stops the store, as a failed creation always did.
    func settleMakes() {
        for (documentFiles, error) in maker.settle() {
            attempt("create \(documentFiles.uri)") { throw error }
        }
    }
}
