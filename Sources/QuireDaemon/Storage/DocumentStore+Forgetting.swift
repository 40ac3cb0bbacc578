import Glibc

/// Forgetting documents for good (a deleted file's document every holder saw deleted,
/// protocol/decisions/project-tree.md, *Forgetting a deleted file's document*).
extension DocumentStore {
    /// Removes the files of the documents `ids` for good and stops keeping them; returns those
    /// that went. Crash-safe: each document's directory is first renamed to `<id>.tmp`, which
    /// loading removes without reading (`removeUnfinishedDirectories`), and the documents
    /// directory is synced once for all of them before anything in them is removed; so after a
    /// crash at any point a document is either whole or gone, never half.
    /// A document whose own files are not durable yet (pending in its pack, `DocumentFilesMaker`)
    /// is left as it is; the caller tries it again later. One whose pack is still on disk (kept
    /// for more documents) has its going recorded in the pack, synced, before its directory is
    /// renamed: otherwise, after a crash, the pack would make it again from its first records alone.
    /// - Complexity: O(documents) renames, one directory sync, then O(their files) removals.
    func forget(documentIDs ids: [UInt64]) -> Set<UInt64> {
        guard failure == nil else { return [] }
        let going = ids.filter { id in files[id].map { !$0.isUnmade } ?? false && !maker.isPending(id) }
        // A pack kept for more documents still lists these: it records that they went, durably,
        // before their directories go (else a crash between would make each again from its pack).
        let packed = going.filter { maker.holdsInPack($0) }
        if !packed.isEmpty {
            do {
                for id in packed { try maker.discard(id) }
                let packs = maker.syncSteps()
                for step in packs.steps { try step() }
                packs.succeeded()
            } catch {
                logger.warning("cannot record in their pack that \(packed.count) documents go (\(error)); they are kept for now")
                return []
            }
        }
        var renamed: [(id: UInt64, gone: String)] = []
        for id in going {
            guard let documentFiles = files[id] else { continue }
            let directory = documentFiles.directory
            let gone = directory + DocumentFiles.unfinishedSuffix
            DocumentFiles.removeTree(gone)   // a leftover of an earlier attempt
            documentFiles.closeUnsynced()   // going: nothing more of it needs to be durable
            guard rename(directory, gone) == 0 else {
                logger.warning("cannot remove the files of \(DisplayText.clean(documentFiles.uri)) (rename of \(directory): errno \(errno)); it is kept")
                continue
            }
            renamed.append((id, gone))
        }
        guard !renamed.isEmpty else { return [] }
        do { try FileSystem.syncDirectory(documentsPath) } catch {
            // The renames may come undone at a crash: each document is then still whole.
            logger.warning("cannot sync \(documentsPath) after forgetting \(renamed.count) documents (\(error)); after a crash they may load again")
        }
        for (id, gone) in renamed {
            files[id] = nil
            unsynced.remove(id)
            grown.remove(id)
            openOrder.removeAll { $0 == id }
            madeSinceCommit.remove(id)
            DocumentFiles.removeTree(gone)
        }
        return Set(renamed.map(\.id))
    }
}

extension DocumentFilesMaker {
    /// Whether document `id` is listed in a pack still on disk.
    func holdsInPack(_ id: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return packOf[id] != nil
    }

    /// Whether document `id`'s own files are not durable yet (its pack waits for it).
    func isPending(_ id: UInt64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard let number = packOf[id] else { return queued[id] != nil || inProgress.contains(id) }
        return packs[number]?.pending.contains(id) ?? false
    }
}
