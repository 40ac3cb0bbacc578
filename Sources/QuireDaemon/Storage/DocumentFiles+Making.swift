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
        guard let metadataBytes = try? OwnedFiles.read(directory + "/" + metadataName),
              let metadata = try? JSONParser().parse(metadataBytes),
              metadata["id"]?.stringValue.flatMap({ UInt64($0, radix: 16) }) == id else { return false }
        guard !records.isEmpty else { return true }
        let names = (try? FileSystem.list(directory)) ?? []
        if !numbers(in: names, prefix: "snapshot").isEmpty { return true }
        guard let segment = try? OwnedFiles.read(directory + "/" + segmentName(1)),
              segment.count >= LogRecords.magicBytes + records.count else { return false }
        return segment[LogRecords.magicBytes..<(LogRecords.magicBytes + records.count)].elementsEqual(records)
    }

    /// The URI `directory`'s `document.json` names, when it is readable.
    static func namedURI(_ directory: String) -> String? {
        guard let bytes = try? OwnedFiles.read(directory + "/" + metadataName), let metadata = try? JSONParser().parse(bytes) else { return nil }
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
