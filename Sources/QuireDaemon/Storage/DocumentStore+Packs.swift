import Foundation

/// Loading what a crash (or an exit before the maker's thread was done) left in the packs:
/// every document a pack holds whose own directory is missing or unfinished is made from it,
/// durably, before the directories are read; then the pack is removed.
extension DocumentStore {
    /// Removes the `<id>.tmp` directories a crash stopped being made or removed: a document in
    /// one was either never acknowledged, or is in a pack, which makes it again, or was being
    /// forgotten (`forget(documentIDs:)`), which its rename to this name decided.
    func removeUnfinishedDirectories() {
        let names: [String]
        do { names = try FileSystem.list(documentsPath) } catch { return }
        for name in names where name.hasSuffix(DocumentFiles.unfinishedSuffix) {
            var info = stat()
            guard lstat(documentsPath + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
            do {
                try FileManager.default.removeItem(atPath: documentsPath + "/" + name)
                logger.info("removed \(documentsPath)/\(name), a document whose creation or removal a crash interrupted")
            } catch {
                logger.warning("cannot remove \(documentsPath)/\(name), a document whose creation or removal a crash interrupted: \(error)")
            }
        }
    }

    /// A pack damaged before its end (not a torn last record), once its good part is loaded, is renamed `damaged-pack-N-<seconds>`, which
    /// loading never reads again, instead of being removed: the records after its damage may be
    /// whole though their boundaries cannot be found, and a person may still want them. It is
    /// not kept under its own name, where the next load would bring back its documents even
    /// after they were deleted. Removed only if it cannot be renamed.
    /// A pack with an entry that lost to a directory holding another history of its document is
    /// set aside the same way (`conflicting-pack-N-<seconds>`): the entry's history stays on disk.
    func setAside(pack packPath: String, number: Int, kind: String) {
        let aside = packsPath + "/\(kind)-pack-\(number)-\(Int(Date().timeIntervalSince1970))"
        if rename(packPath, aside) == 0 {
            logger.warning("\(packPath) is \(kind): kept as \(aside), which is not loaded again")
        } else {
            logger.error("cannot rename the \(kind) \(packPath) to \(aside) (errno \(errno)); it is removed")
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
            var conflicting = 0
            let missing = contents.entries.filter { entry in
                let directory = documentsPath + "/" + DocumentFiles.directoryName(for: entry.id)
                switch DocumentFiles.standing(of: directory, id: entry.id, uri: entry.uri, records: entry.records) {
                case .held: return false
                case .remake: return true
                case .otherHistory(let why):
                    // Another history under the same ID (the same name or another; damage, or a
                    // pack from elsewhere): the directory is kept and loaded with its edits, the
                    // pack's entry is not, and the pack is set aside so its history is not lost.
                    conflicting += 1
                    logger.warning("\(packPath) holds \(DisplayText.clean(entry.uri)) with another history than \(directory) (\(DisplayText.clean(why))): the directory is kept, the pack's entry is not loaded")
                    return false
                }
            }
            var failed = 0
            for start in stride(from: 0, to: missing.count, by: DocumentFilesMaker.roundSize) {
                let round = missing[start..<min(missing.count, start + DocumentFilesMaker.roundSize)].map { entry in
                    let directory = documentsPath + "/" + DocumentFiles.directoryName(for: entry.id)
                    // An unfinished directory (a crash cut its creation short, before any edit of it
                    // was synced): the pack has the document whole.
                    if FileSystem.size(directory) != nil {  // `standing` found nothing in it the pack lacks
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
                if contents.damage != nil && !contents.damageIsTornTail {
                    setAside(pack: packPath, number: number, kind: "damaged")
                } else if conflicting > 0 {
                    setAside(pack: packPath, number: number, kind: "conflicting")
                } else {
                    FileSystem.remove(packPath)
                }
                _ = try? FileSystem.syncDirectory(packsPath)
            }
        }
    }
}
