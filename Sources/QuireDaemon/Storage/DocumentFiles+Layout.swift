import Glibc
import JSON

/// The names and formats of a document's files (`DocumentFiles`): the directory named for the
/// document's ID, `document.json`, log segments `log-N`, snapshots `snapshot-N`, and the kinds of
/// record the segments hold.
extension DocumentFiles {
    static func directoryName(for id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func segmentName(_ number: Int) -> String { "log-\(number)" }
    static func snapshotName(_ number: Int) -> String { "snapshot-\(number)" }

    /// The most a segment or a snapshot is read to: a snapshot is one state record (at most
    /// `LogRecords.maximumPayloadBytes`, past which `scan` calls a record damage) with its edit
    /// IDs and views, and a segment is folded into a snapshot once it outgrows the last one
    /// (`isSnapshotDue`), so neither comes near two such records. A larger file (a sparse file
    /// planted in the data directory, a damaged file system) is refused, naming its size,
    /// before anything is allocated for it: its document is not loaded, the others are.
    static let maximumLogFileBytes = LogRecords.magicBytes + 2 * (LogRecords.headerBytes + LogRecords.maximumPayloadBytes)
    /// The most `document.json` or `file.json` is read to: a name, an ID, a path and the
    /// sharing state, far less than this.
    static let maximumDescriptionBytes = 16 << 20

    /// The largest segment, snapshot or pack number read from a name.
    static let maximumFileNumber = 1 << 48

    /// The numbers of the files in `names` called `prefix-N`, ascending.
    static func numbers(in names: [String], prefix: String) -> [Int] {
        names.compactMap { name -> Int? in
            guard name.hasPrefix(prefix + "-") else { return nil }
            // Quire counts from 1: a larger number than it could reach is not its own, and is
            // ignored rather than overflowing the next number (`last + 1`).
            return Int(name.dropFirst(prefix.count + 1)).flatMap { $0 > 0 && $0 <= maximumFileNumber ? $0 : nil }
        }.sorted()
    }

    /// Writes a new document's directory: `document.json`, and the first segment, its header
    /// followed by `records`. Made whole under a name that loading skips (and removes), then
    /// renamed: a crash part-way never leaves a document directory without its document.json
    /// or log header. Nothing is synced (the store's commit does it).
    static func makeFiles(directory: String, uri: String, id: UInt64, records: [UInt8]) throws {
        try writeUnfinished(directory: directory, uri: uri, id: id, records: records)
        let unfinished = directory + unfinishedSuffix
        guard rename(unfinished, directory) == 0 else { throw StorageError.system("rename", unfinished) }
    }

    /// `makeFiles` up to the rename: the directory `<directory>.tmp` with both files in it.
    static func writeUnfinished(directory: String, uri: String, id: UInt64, records: [UInt8]) throws {
        let unfinished = directory + unfinishedSuffix
        try FileSystem.makeDirectory(unfinished)
        try FileSystem.writeNew(metadata(uri: uri, id: id, sharing: nil), to: unfinished + "/" + metadataName)
        try FileSystem.writeNew(LogRecords.Kind.log.magic + records, to: unfinished + "/" + segmentName(1))
    }

    /// Writes `document.json` atomically: the document's name, ID, and, once a peer held it, who
    /// holds it (`sharing`, nil: no peer ever did).
    static func writeMetadata(in directory: String, uri: String, id: UInt64, sharing: DocumentSharing?) throws {
        try FileSystem.writeAtomically(metadata(uri: uri, id: id, sharing: sharing), to: directory + "/" + metadataName)
    }

    static func metadata(uri: String, id: UInt64, sharing: DocumentSharing?) -> [UInt8] {
        var metadata: [String: JSONValue] = ["format": 1, "uri": .string(uri), "id": .string(String(id, radix: 16))]
        if let sharing {
            metadata["shared"] = true
            metadata["sharing"] = sharing.json
        }
        return JSONSerializer(sortedKeys: true).serialize(.object(metadata))
    }

    /// Creates segment `number`, its header synced and its directory entry durable.
    static func startSegment(_ number: Int, in directory: String) throws -> AppendableFile {
        let path = directory + "/" + segmentName(number)
        let file = try AppendableFile(path: path, create: true)
        if file.size > 0 { try file.truncate(to: 0) }
        try file.append(LogRecords.Kind.log.magic)
        try file.sync()
        try FileSystem.syncDirectory(directory)
        return file
    }

    enum RecordKind: UInt8 {
        case operations = 1
        /// A whole state: a snapshot's first record; in a log, a state a peer sent, which
        /// replaces what the records before it built.
        case state = 2
        /// `[length: UInt8][edit ID: UTF-8][operations]`: one editor edit's operations.
        case editOperations = 3
        /// In a snapshot after the state: `[count: UInt32 LE]` then `[length: UInt8][ID]` each.
        case editIDs = 4
        /// A `ViewEvent` (with an edit's ID and operations when it is an edit).
        case viewEvent = 5
        /// In a snapshot after the state and edit IDs: one editor view's state (opaque here).
        case viewState = 6
        /// In a log: who holds the document (`DocumentSharing` as JSON); the last one counts.
        case sharing = 7
        /// In a log: the document's file binding (`DocumentFiles.writeBinding`); the last one counts.
        case binding = 8
    }

}
