import Foundation

/// Loading what a crash (or an exit before the maker's thread was done) left in the packs:
/// every document a pack holds whose own directory is missing or unfinished is made from it,
/// durably, before the directories are read; then the pack is removed.
extension DocumentStore {
    /// Removes the `<id>.tmp` directories a crash stopped being made: a document in one was
    /// either never acknowledged or is in a pack, which makes it again.
    func removeUnfinishedDirectories() {
        let names: [String]
        do { names = try FileSystem.list(documentsPath) } catch { return }
        for name in names where name.hasSuffix(DocumentFiles.unfinishedSuffix) {
            var info = stat()
            guard lstat(documentsPath + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
            do {
                try FileManager.default.removeItem(atPath: documentsPath + "/" + name)
                logger.info("removed \(documentsPath)/\(name), a document whose creation a crash interrupted")
            } catch {
                logger.warning("cannot remove \(documentsPath)/\(name), a document whose creation a crash interrupted: \(error)")
            }
        }
    }

    /// A pack damaged before its end (not a torn last record), once its good part is loaded, is renamed `damaged-pack-N-<seconds>`, which
    /// loading never reads again, instead of being removed: the records after its damage may be
    /// whole though their boundaries cannot be found, and a person may still want them. It is
    /// not kept under its own name, where the next load would bring back its documents even
    /// after they were deleted. Removed only if it cannot be renamed.
    func setAside(damagedPack packPath: String, number: Int) {
        let aside = packsPath + "/damaged-pack-\(number)-\(Int(Date().timeIntervalSince1970))"
        if rename(packPath, aside) == 0 {
            logger.warning("\(packPath) is damaged: kept as \(aside), which is not loaded again")
        } else {
            logger.error("cannot rename the damaged \(packPath) to \(aside) (errno \(errno)); it is removed")
            FileSystem.remove(packPath)
        }
    }

    /// For each pack on disk, oldest first: its documents whose directory does not hold them
    /// yet (`DocumentFiles.holdsDocument`; a whole directory wins over the pack) are made from
    /// it, durably; then the pack is removed. A torn or damaged pack keeps what comes before
    /// the damage (said in a warning), like a log; a torn last record is dropped with the pack, damage
    /// before the end sets the pack aside (`setAside`); a pack that cannot be read, or a document that
    /// cannot be made, keeps its pack for the next load and costs nothing else.
    func makeDocumentsOfPacks() {
        let numbers: [Int]
        do { numbers = DocumentFiles.numbers(in: try FileSystem.list(packsPath), prefix: "pack") } catch {
            logger.error("cannot list \(packsPath): \(error)")
            return
        }
        let syncs = ParallelSyncs(width: Self.parallelSyncs)
        for number in numbers {
            let packPath = packsPath + "/" + DocumentPack.name(number)
            let contents: DocumentPack.Contents
            do { contents = try DocumentPack.read(packPath) } catch {
                logger.error("cannot read \(packPath) (\(error)); its documents are not loaded, the pack is kept")
                continue
            }
            if let damage = contents.damage {
                logger.warning("\(packPath): \(damage); the \(contents.entries.count) documents before it are kept")
            }
            let missing = contents.entries.filter { entry in
                let directory = documentsPath + "/" + DocumentFiles.directoryName(for: entry.id)
                if DocumentFiles.holdsDocument(directory, id: entry.id, records: entry.records) { return false }
                // Another document under the same ID (damage, or a pack from elsewhere): it is
                // kept with its edits; the pack's entry is not loaded.
                if let other = DocumentFiles.namedURI(directory), other != entry.uri {
                    logger.warning("\(packPath) holds \(entry.uri) under the ID of \(other), kept in \(directory); \(entry.uri) is not loaded from it")
                    return false
                }
                return true
            }
            var failed = 0
            for start in stride(from: 0, to: missing.count, by: DocumentFilesMaker.roundSize) {
                let round = missing[start..<min(missing.count, start + DocumentFilesMaker.roundSize)].map { entry in
                    let directory = documentsPath + "/" + DocumentFiles.directoryName(for: entry.id)
                    // An unfinished directory (a crash cut its creation short, before any edit of it
                    // was synced): the pack has the document whole.
                    if FileSystem.size(directory) != nil {
                        logger.warning("\(directory) does not hold \(entry.uri) whole; it is made again from \(packPath)")
                        DocumentFiles.removeTree(directory)
                    }
                    return Result<DocumentFiles.Unfinished, Error>.success(
                        DocumentFiles.Unfinished(directory: directory, uri: entry.uri, id: entry.id, records: entry.records))
                }
                for (entry, error) in zip(round, DocumentFiles.makeDurably(round, in: documentsPath, syncs: syncs)) {
                    guard let error else { continue }
                    failed += 1
                    if case .success(let document) = entry { logger.error("cannot make \(document.uri) from \(packPath): \(error)") }
                }
            }
            if !missing.isEmpty { logger.info("made \(missing.count - failed) documents from \(packPath)") }
            if failed == 0 {
                if contents.damage != nil && !contents.damageIsTornTail { setAside(damagedPack: packPath, number: number) } else { FileSystem.remove(packPath) }
                _ = try? FileSystem.syncDirectory(packsPath)
            }
        }
    }
}
