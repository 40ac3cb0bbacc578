import Glibc
import JSON

/// Giving packed documents their own files durably (`DocumentFilesMaker`, and loading a pack a
/// crash left), and telling whether a directory already holds what a pack holds of its document.
extension DocumentFiles {
    /// A document to be given its own files: its name, ID and first log records.
    struct Unfinished {
        let directory: String
        let uri: String
        let id: UInt64
        let records: [UInt8]
    }

    /// Makes each document's directory under `documents` (`<id>.tmp` first, as `makeFiles`),
    /// syncs every file and directory (together, `syncs`), renames each into place and syncs
    /// `documents` once: a directory under its own name is therefore always whole on stable
    /// storage. Returns each document's error or nil; one that failed leaves nothing behind.
    static func makeDurably(_ documents: [Result<Unfinished, Error>], in documentsPath: String, syncs: ParallelSyncs) -> [Error?] {
        var errors: [Error?] = documents.map { result in
            switch result {
            case .success(let document):
                do {
                    try writeUnfinished(directory: document.directory, uri: document.uri, id: document.id, records: document.records)
                    return nil
                } catch { return error }
            case .failure(let error): return error
            }
        }
        var steps: [() throws -> Void] = []
        var owners: [Int] = []
        for (index, result) in documents.enumerated() {
            guard errors[index] == nil, case .success(let document) = result else { continue }
            let unfinished = document.directory + unfinishedSuffix
            let segment = unfinished + "/" + segmentName(1), metadata = unfinished + "/" + metadataName
            steps += [{ try AppendableFile(path: segment, create: false).sync() },
                      { try FileSystem.syncFile(metadata) },
                      { try FileSystem.syncDirectory(unfinished) }]
            owners += [index, index, index]
        }
        for (owner, error) in zip(owners, syncs.run(steps)) where error != nil && errors[owner] == nil { errors[owner] = error }
        var renamed = false
        for (index, result) in documents.enumerated() {
            guard case .success(let document) = result else { continue }
            let unfinished = document.directory + unfinishedSuffix
            if errors[index] == nil {
                if rename(unfinished, document.directory) == 0 {
                    renamed = true
                    continue
                }
                errors[index] = StorageError.system("rename", unfinished)
            }
            removeTree(unfinished)
        }
        if renamed {
            do { try FileSystem.syncDirectory(documentsPath) } catch {
                for index in errors.indices where errors[index] == nil { errors[index] = error }
            }
        }
        return errors
    }

    /// Whether `directory` already holds a document whose first records are `records`: its
    /// `document.json` names `id`, and it has a snapshot or its first segment starts with
    /// `records` (a directory whose creation a crash cut short fails this; what was written
    /// after its first records was synced after them).
    static func holdsDocument(_ directory: String, id: UInt64, records: [UInt8]) -> Bool {
        guard let metadataBytes = try? OwnedFiles.read(directory + "/" + metadataName, limit: maximumDescriptionBytes),
              let metadata = try? JSONParser().parse(metadataBytes),
              metadata["id"]?.stringValue.flatMap({ UInt64($0, radix: 16) }) == id else { return false }
        guard !records.isEmpty else { return true }
        let names = (try? FileSystem.list(directory)) ?? []
        if !numbers(in: names, prefix: "snapshot").isEmpty { return true }
        guard let segment = try? OwnedFiles.read(directory + "/" + segmentName(1), limit: maximumLogFileBytes),
              segment.count >= LogRecords.magicBytes + records.count else { return false }
        return segment[LogRecords.magicBytes..<(LogRecords.magicBytes + records.count)].elementsEqual(records)
    }

    /// How a pack's entry (document `id` named `uri`, first records `records`) stands against the
    /// directory of the same ID: whether loading makes the document from the pack.
    enum PackEntryStanding: Equatable {
        /// The directory holds the document (and what was written after its first records).
        case held
        /// Nothing there, or what a crash left of making it: every byte of its log is in the
        /// pack's entry too, so making the directory again from the pack loses nothing.
        case remake
        /// Another history (a log that differs from the entry's records or goes past them, a
        /// snapshot, a later segment, another document's name): kept and loaded; the entry is not.
        case otherHistory(String)
    }

    /// `PackEntryStanding` of the entry against `directory`. A history is never dropped for a
    /// pack's entry unless the pack holds every byte of it.
    static func standing(of directory: String, id: UInt64, uri: String, records: [UInt8]) -> PackEntryStanding {
        guard FileSystem.size(directory) != nil else { return .remake }
        if holdsDocument(directory, id: id, records: records) { return .held }
        if let other = namedURI(directory), other != uri { return .otherHistory("it names \(other)") }
        let names = (try? FileSystem.list(directory)) ?? []
        if !numbers(in: names, prefix: "snapshot").isEmpty { return .otherHistory("it has a snapshot of another state") }
        for number in numbers(in: names, prefix: "log") where number > 1 && (FileSystem.size(directory + "/" + segmentName(number)) ?? 0) > LogRecords.magicBytes {
            return .otherHistory("its \(segmentName(number)) holds records")
        }
        let expected = LogRecords.Kind.log.magic + records
        let first = directory + "/" + segmentName(1)
        guard let size = FileSystem.size(first) else { return .remake }
        guard size <= expected.count else { return .otherHistory("its \(segmentName(1)) holds \(size) bytes, more than the pack's \(expected.count)") }
        guard let bytes = try? OwnedFiles.read(first, limit: expected.count), expected.starts(with: bytes) else {
            return .otherHistory("its \(segmentName(1)) holds other records than the pack's")
        }
        return .remake
    }

    /// The URI `directory`'s `document.json` names, when it is readable.
    static func namedURI(_ directory: String) -> String? {
        guard let bytes = try? OwnedFiles.read(directory + "/" + metadataName, limit: maximumDescriptionBytes), let metadata = try? JSONParser().parse(bytes) else { return nil }
        return metadata["uri"]?.stringValue
    }

    /// Removes `path` and what it holds, if it is there (a failure leaves it for loading to find).
    static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR {
            for name in (try? FileSystem.list(path)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
