import Glibc
import JSON
import ReplicatingTypes

/// One document's directory in the data directory: `document.json` (its name and ID, and who
/// held it as of the last snapshot), append-only log segments `log-N` of operation records (and
/// of sharing, binding and whole-state records, `DocumentFiles+Records`), and snapshots
/// `snapshot-N` holding the whole state of every segment before N.
///
/// An editor edit's operations are logged in one record with the edit's ID, so the ID is durable
/// exactly when the edit is; snapshots carry the latest IDs (`RecentEditIDs`) after the state.
///
/// Guarantees: an operation passed to `append` is on stable storage once `sync` returns.
/// A snapshot is written to a temporary file, synced, renamed and its directory synced before
/// any segment it replaces is removed; the previous snapshot and the segments after it are
/// kept too, so a damaged newest snapshot still leaves a complete history.
final class DocumentFiles {
    static let metadataName = "document.json"
    /// A log reaches at least this many bytes before it is folded into a snapshot.
    var minimumLogBytesBeforeSnapshot = 1 << 20

    let directory: String
    let uri: String
    let id: UInt64
    /// The segment appends go to, open only while this document is among the recently written
    /// ones (`DocumentStore` closes the rest, so thousands of documents need few descriptors).
    private var segment: AppendableFile?
    private var segmentNumber: Int
    /// The first segment of the newest snapshot that verified (nil: no snapshot yet).
    private var newestSnapshot: Int?
    private(set) var logBytesSinceSnapshot = 0
    private var lastSnapshotBytes = 0
    private(set) var hasUnsyncedData = false
    /// The IDs of the latest editor edits logged (or recovered), written into every snapshot.
    private(set) var editIDs = RecentEditIDs()

    private init(directory: String, uri: String, id: UInt64, segment: AppendableFile?, segmentNumber: Int, newestSnapshot: Int?) {
        self.directory = directory
        self.uri = uri
        self.id = id
        self.segment = segment
        self.segmentNumber = segmentNumber
        self.newestSnapshot = newestSnapshot
    }

    /// The files of a document recovery read back: appends go to segment `segmentNumber`, after
    /// `logBytesSinceSnapshot` bytes logged since the newest snapshot.
    convenience init(recoveredIn directory: String, uri: String, id: UInt64, segmentNumber: Int, newestSnapshot: Int?,
                     logBytesSinceSnapshot: Int, editIDs: RecentEditIDs) {
        self.init(directory: directory, uri: uri, id: id, segment: nil, segmentNumber: segmentNumber, newestSnapshot: newestSnapshot)
        self.logBytesSinceSnapshot = logBytesSinceSnapshot
        self.editIDs = editIDs
        if let newestSnapshot {
            lastSnapshotBytes = FileSystem.size(directory + "/" + Self.snapshotName(newestSnapshot)) ?? 0
        }
    }

    // MARK: Creating

    /// A new document whose files are not made yet: its first records (`firstRecords`, counted
    /// here) are in a pack, and it gets its own files later (`DocumentFilesMaker`), or at once
    /// when the store must touch them (`make(records:)`). Nothing may be written to it before.
    static func packed(under root: String, uri: String, id: UInt64, firstRecordBytes: Int) -> DocumentFiles {
        let files = DocumentFiles(directory: root + "/" + directoryName(for: id), uri: uri, id: id, segment: nil, segmentNumber: 1, newestSnapshot: nil)
        files.isUnmade = true
        files.logBytesSinceSnapshot = firstRecordBytes
        return files
    }

    /// The first log records of a new document holding `initial` (none when it is empty).
    static func firstRecords(_ initial: [ReplicatingArrayOperation<Unicode.Scalar>]) -> [UInt8] {
        guard !initial.isEmpty else { return [] }
        return LogRecords.record([RecordKind.operations.rawValue] + ReplicatingArrayCoding.encode(initial))
    }

    /// Its files are not made yet (`packed`).
    private(set) var isUnmade = false
    /// Set by the store for a packed document: puts a record in its pack and returns true, or
    /// makes its files and returns false (the maker's thread has started on them).
    var packedWrite: ((DocumentFiles, [UInt8]) throws -> Bool)?

    /// Makes the files of a packed document with its first `records`, not synced: the store's
    /// next `commit()` syncs them (`syncSteps`) and the documents directory.
    func make(records: [UInt8]) throws {
        guard isUnmade else { return }
        try Self.makeFiles(directory: directory, uri: uri, id: id, records: records)
        isUnmade = false
        packedWrite = nil
        isCreationUnsynced = true
        hasUnsyncedData = true
    }

    /// The maker's thread gave this packed document its own files, durably.
    func madeElsewhere() {
        isUnmade = false
        packedWrite = nil
        isCreationUnsynced = false
        hasUnsyncedData = false
    }

    /// Throws when the files are not made yet: the store makes them before it writes.
    func requireMade() throws {
        guard !isUnmade else { throw StorageError("the files of \(uri) are not made yet") }
    }

    /// The suffix of a document directory being made; one left by a crash held no acknowledged
    /// document that is not in a pack too (loading removes it and makes it from the pack).
    static let unfinishedSuffix = ".tmp"

    /// Whether `document.json`, the first segment and the directory's entries still wait for
    /// their first sync.
    private(set) var isCreationUnsynced = false

    /// The sharing and binding last recorded in the log (`DocumentFiles+Records`), not yet written
    /// into `document.json` and `file.json` (the next snapshot does, before the segments holding
    /// their records stop being replayed). Nil: none since; `.some(nil)` for the binding: unbound.
    var unfoldedSharing: DocumentSharing?
    var unfoldedBinding: FileBinding??

    // MARK: Writing

    /// Logs a view event; an edit's operations and ID go in the same record, so the edit, its
    /// ID and what it did to its editor's view are durable together.
    func append(_ event: ViewEvent, editID: String? = nil, operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []) throws {
        if let editID, case .edited = event { editIDs.insert(editID) }
        let record = LogRecords.record([RecordKind.viewEvent.rawValue] + event.encoded(editID: editID, operations: operations))
        try write(record)
        logBytesSinceSnapshot += record.count
        hasUnsyncedData = true
    }

    /// Adds `operations` to the log (durable after the next `sync`), with the ID of the editor
    /// edit they make up, when it has one.
    func append(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], editID: String? = nil) throws {
        guard !operations.isEmpty else { return }
        var payload: [UInt8]
        let idBytes = editID.map { Array($0.utf8) } ?? []
        if let editID, !idBytes.isEmpty, idBytes.count <= Int(UInt8.max) {
            payload = [RecordKind.editOperations.rawValue, UInt8(idBytes.count)] + idBytes
            editIDs.insert(editID)
        } else {
            payload = [RecordKind.operations.rawValue]
        }
        payload.append(contentsOf: ReplicatingArrayCoding.encode(operations))
        let record = LogRecords.record(payload)
        try write(record)
        logBytesSinceSnapshot += record.count
        hasUnsyncedData = true
    }

    /// Starts writing back what `sync()` will wait for, without waiting: the store starts it for
    /// every document of a commit before it syncs the first one.
    func startSync() {
        guard !isUnmade else { return }
        if hasUnsyncedData {
            if let segment { segment.startWriteback() } else { FileSystem.startWriteback(directory + "/" + Self.segmentName(segmentNumber)) }
        }
        if isCreationUnsynced { FileSystem.startWriteback(directory + "/" + Self.metadataName) }
    }

    /// Puts what was appended on stable storage: the open segment is synced, a segment closed
    /// with unsynced data is reopened to be synced. A new document's `document.json` and
    /// directory entries are synced too (its entry in the documents directory is the store's
    /// to sync, once for every document created).
    func sync() throws {
        try requireMade()
        for step in syncSteps() { try step() }
        syncSucceeded()
    }

    /// What `sync()` does, as independent steps on different files that may run at once (the
    /// store runs a commit's steps together, `ParallelSyncs`); once every one has succeeded,
    /// `syncSucceeded()` notes it. Empty when nothing waits for a sync. The files must be
    /// made.
    func syncSteps() -> [() throws -> Void] {
        var steps: [() throws -> Void] = []
        if hasUnsyncedData {
            if let segment {
                steps.append { try segment.sync() }
            } else {
                // A closed segment is opened just for the sync, and closed again.
                let path = directory + "/" + Self.segmentName(segmentNumber)
                steps.append { try AppendableFile(path: path, create: false).sync() }
            }
        }
        if isCreationUnsynced {
            let metadata = directory + "/" + Self.metadataName, directory = self.directory
            steps.append { try FileSystem.syncFile(metadata) }
            steps.append { try FileSystem.syncDirectory(directory) }
        }
        return steps
    }

    /// Every step `syncSteps()` gave succeeded: what was appended, and a new document's files and
    /// entries, are on stable storage.
    func syncSucceeded() {
        hasUnsyncedData = false
        isCreationUnsynced = false
    }

    /// Appends `record` (a framed log record) like an edit: durable after the next `sync`.
    func appendRecord(_ record: [UInt8]) throws {
        try write(record)
        logBytesSinceSnapshot += record.count
        hasUnsyncedData = true
    }

    /// Appends `record` to the current segment; while the files are not made, to the pack
    /// when `packedWrite` takes it (it makes the files when it does not).
    private func write(_ record: [UInt8]) throws {
        if isUnmade, let packedWrite, try packedWrite(self, record) { return }
        try requireMade()
        try openSegment().append(record)
    }

    /// The current segment, opened for appending when it is not open.
    private func openSegment() throws -> AppendableFile {
        if let segment { return segment }
        let file = try AppendableFile(path: directory + "/" + Self.segmentName(segmentNumber), create: false)
        segment = file
        return file
    }

    var isOpen: Bool { segment != nil }

    /// Closes the segment's descriptor without syncing: `sync()` reopens it for that, so a burst
    /// that writes to more documents than stay open still syncs them all in one `commit()`.
    func closeUnsynced() {
        segment = nil
    }

    /// Whether the log has grown enough to be folded into a snapshot: past a floor, and past the
    /// size of the last snapshot, so snapshot work stays proportional to what was logged.
    var isSnapshotDue: Bool {
        logBytesSinceSnapshot >= max(minimumLogBytesBeforeSnapshot, lastSnapshotBytes)
    }

    /// Folds everything logged so far into a snapshot of `text` (which must hold every appended
    /// operation), then removes what two snapshots make redundant.
    func writeSnapshot(of text: ReplicatingText, views: [[UInt8]] = []) throws {
        try sync()
        let next = segmentNumber + 1
        let newSegment = try Self.startSegment(next, in: directory)
        segment = segment == nil ? nil : newSegment   // open only if the old one was
        segmentNumber = next
        // The sharing and binding recorded in segments this snapshot puts out of replay's reach.
        try foldRecords()
        var bytes = Self.encodeState(text) + Self.encodeEditIDs(editIDs)
        for view in views { bytes += LogRecords.record([RecordKind.viewState.rawValue] + view) }
        try FileSystem.writeAtomically(bytes, to: directory + "/" + Self.snapshotName(next))
        let previous = newestSnapshot
        newestSnapshot = next
        logBytesSinceSnapshot = 0
        lastSnapshotBytes = bytes.count
        // Keep this snapshot and the previous one with every segment after it.
        guard let previous else { return }
        let names = try FileSystem.list(directory)
        for number in Self.numbers(in: names, prefix: "snapshot") where number < previous {
            FileSystem.remove(directory + "/" + Self.snapshotName(number))
        }
        for number in Self.numbers(in: names, prefix: "log") where number < previous {
            FileSystem.remove(directory + "/" + Self.segmentName(number))
        }
        try FileSystem.syncDirectory(directory)
    }
}
