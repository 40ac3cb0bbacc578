import Glibc
import JSON
import ReplicatingTypes

/// One document's directory in the data directory: `document.json` (its name and ID),
/// append-only log segments `log-N` of operation records, and snapshots `snapshot-N` holding the
/// whole state of every segment before N.
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

    static func directoryName(for id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    static func segmentName(_ number: Int) -> String { "log-\(number)" }
    static func snapshotName(_ number: Int) -> String { "snapshot-\(number)" }

    /// The numbers of the files in `names` called `prefix-N`, ascending.
    static func numbers(in names: [String], prefix: String) -> [Int] {
        names.compactMap { name -> Int? in
            guard name.hasPrefix(prefix + "-") else { return nil }
            return Int(name.dropFirst(prefix.count + 1)).flatMap { $0 > 0 ? $0 : nil }
        }.sorted()
    }

    // MARK: Creating

    /// A new document's directory under `root`, holding `uri` and `id`, with an empty first
    /// segment. Nothing is synced yet: the store's next `commit()` syncs every document created
    /// since the last one together (`sync()` here, then `root` once), before any reply that
    /// tells of them goes out under `.sync` durability. The files reach the kernel at once, so
    /// a `kill -9` loses none of them.
    static func create(under root: String, uri: String, id: UInt64) throws -> DocumentFiles {
        let directory = root + "/" + directoryName(for: id)
        // Made whole under a name that loading skips (and removes), then renamed: a crash part-way
        // never leaves a document directory without its document.json or log header.
        let unfinished = directory + unfinishedSuffix
        try FileSystem.makeDirectory(unfinished)
        try FileSystem.writeNew(metadata(uri: uri, id: id, sharing: nil), to: unfinished + "/" + metadataName)
        try FileSystem.writeNew(LogRecords.Kind.log.magic, to: unfinished + "/" + segmentName(1))
        guard rename(unfinished, directory) == 0 else { throw StorageError.system("rename", unfinished) }
        let segment = try AppendableFile(path: directory + "/" + segmentName(1), create: false)
        let files = DocumentFiles(directory: directory, uri: uri, id: id, segment: segment, segmentNumber: 1, newestSnapshot: nil)
        files.isCreationUnsynced = true
        files.hasUnsyncedData = true
        return files
    }

    /// The suffix of a document directory being made (`create`); one left by a crash held no
    /// acknowledged document.
    static let unfinishedSuffix = ".tmp"

    /// Whether `document.json`, the first segment and the directory's entries still wait for
    /// their first sync.
    private(set) var isCreationUnsynced = false

    /// Writes `document.json` atomically: the document's name, ID, and, once a peer held it, who
    /// holds it (`sharing`, nil: no peer ever did).
    private static func writeMetadata(in directory: String, uri: String, id: UInt64, sharing: DocumentSharing?) throws {
        try FileSystem.writeAtomically(metadata(uri: uri, id: id, sharing: sharing), to: directory + "/" + metadataName)
    }

    private static func metadata(uri: String, id: UInt64, sharing: DocumentSharing?) -> [UInt8] {
        var metadata: [String: JSONValue] = ["format": 1, "uri": .string(uri), "id": .string(String(id, radix: 16))]
        if let sharing {
            metadata["shared"] = true
            metadata["sharing"] = sharing.json
        }
        return JSONSerializer(sortedKeys: true).serialize(.object(metadata))
    }

    /// Records that peers hold this document, which, and where its copies stand (its tombstones
    /// are no longer this daemon's alone to drop).
    func recordSharing(_ sharing: DocumentSharing) throws {
        try Self.writeMetadata(in: directory, uri: uri, id: id, sharing: sharing)
    }

    /// Creates segment `number`, its header synced and its directory entry durable.
    private static func startSegment(_ number: Int, in directory: String) throws -> AppendableFile {
        let path = directory + "/" + segmentName(number)
        let file = try AppendableFile(path: path, create: true)
        if file.size > 0 { try file.truncate(to: 0) }
        try file.append(LogRecords.Kind.log.magic)
        try file.sync()
        try FileSystem.syncDirectory(directory)
        return file
    }

    // MARK: Writing

    enum RecordKind: UInt8 {
        case operations = 1
        case state = 2
        /// `[length: UInt8][edit ID: UTF-8][operations]`: one editor edit's operations.
        case editOperations = 3
        /// In a snapshot after the state: `[count: UInt32 LE]` then `[length: UInt8][ID]` each.
        case editIDs = 4
        /// A `ViewEvent` (with an edit's ID and operations when it is an edit).
        case viewEvent = 5
        /// In a snapshot after the state and edit IDs: one editor view's state (opaque here).
        case viewState = 6
    }

    /// Logs a view event; an edit's operations and ID go in the same record, so the edit, its
    /// ID and what it did to its editor's view are durable together.
    func append(_ event: ViewEvent, editID: String? = nil, operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []) throws {
        if let editID, case .edited = event { editIDs.insert(editID) }
        let record = LogRecords.record([RecordKind.viewEvent.rawValue] + event.encoded(editID: editID, operations: operations))
        try openSegment().append(record)
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
        try openSegment().append(record)
        logBytesSinceSnapshot += record.count
        hasUnsyncedData = true
    }

    /// Starts writing back what `sync()` will wait for, without waiting: the store starts it for
    /// every document of a commit before it syncs the first one.
    func startSync() {
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
        guard hasUnsyncedData || isCreationUnsynced else { return }
        if hasUnsyncedData {
            // A closed segment is opened just for the sync, and closed again.
            try (segment ?? AppendableFile(path: directory + "/" + Self.segmentName(segmentNumber), create: false)).sync()
        }
        hasUnsyncedData = false
        if isCreationUnsynced {
            try FileSystem.syncFile(directory + "/" + Self.metadataName)
            try FileSystem.syncDirectory(directory)
            isCreationUnsynced = false
        }
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

    // MARK: File binding

    static let bindingName = "file.json"
    static let bindingBaseName = "file-base"

    /// Records `binding` (nil: none): its base state first, then `file.json`, each atomically,
    /// so `file.json` never names a hash whose base is not on disk.
    func writeBinding(_ binding: FileBinding?) throws {
        guard let binding else {
            FileSystem.remove(directory + "/" + Self.bindingName)
            FileSystem.remove(directory + "/" + Self.bindingBaseName)
            try FileSystem.syncDirectory(directory)
            return
        }
        try FileSystem.writeAtomically(Self.encodeState(binding.base), to: directory + "/" + Self.bindingBaseName)
        var description: [String: JSONValue] = ["path": .string(binding.path)]
        if let hash = binding.hash { description["sha256"] = .string(hash) }
        description["lineEnding"] = .string(binding.format.crlf ? "crlf" : "lf")
        description["bom"] = .bool(binding.format.bom)
        description["finalNewline"] = .bool(binding.format.finalNewline)
        try FileSystem.writeAtomically(JSONSerializer(sortedKeys: true).serialize(.object(description)), to: directory + "/" + Self.bindingName)
    }

    /// The binding recorded in `directory`, if any; a damaged one is reported and dropped.
    static func readBinding(_ directory: String, replica: ReplicaID) -> (FileBinding?, warning: String?) {
        do {
            guard let bytes = try FileSystem.read(directory + "/" + bindingName) else { return (nil, nil) }
            let description = try JSONParser().parse(bytes)
            guard let path = description["path"]?.stringValue else { throw StorageError("it names no path") }
            let base = try readSnapshot(directory + "/" + bindingBaseName, replica: replica).text
            // A binding recorded before formats were kept reads as `.plain` (written as the text is).
            let format = FileFormat(crlf: description["lineEnding"] == .string("crlf"), bom: description["bom"] == .bool(true),
                                    finalNewline: description["finalNewline"] == .bool(true))
            return (FileBinding(path: path, hash: description["sha256"]?.stringValue, base: base, format: format), nil)
        } catch {
            return (nil, "its file binding is unusable (\(error)); bind the file again")
        }
    }

    // MARK: Recovering

    /// A document read back from its directory, with what recovery had to drop.
    struct Recovered {
        let files: DocumentFiles
        let text: ReplicatingText
        let operationCount: Int
        let binding: FileBinding?
        let shared: Bool
        let sharing: DocumentSharing
        var warnings: [String]
    }

    /// Loads the document in `directory`: the newest snapshot that verifies, then every segment
    /// after it in order. A damaged record ends what is read of its segment; a damaged tail of
    /// the last segment is cut off so that appends follow intact data. Throws only when the
    /// directory does not hold a readable document at all.
    static func recover(_ directory: String, replica: ReplicaID, views: (String, UInt64) -> ViewReplay? = { _, _ in nil }) throws -> Recovered {
        guard let metadataBytes = try FileSystem.read(directory + "/" + metadataName) else {
            throw StorageError("\(directory) has no \(metadataName)")
        }
        let metadata: JSONValue
        do { metadata = try JSONParser().parse(metadataBytes) } catch {
            throw StorageError("\(directory)/\(metadataName) is damaged: \(error)")
        }
        guard metadata["format"]?.integerValue == 1, let uri = metadata["uri"]?.stringValue,
              let idText = metadata["id"]?.stringValue, let id = UInt64(idText, radix: 16) else {
            throw StorageError("\(directory)/\(metadataName) does not name a document")
        }
        var warnings: [String] = []
        let names = try FileSystem.list(directory)
        let snapshots = numbers(in: names, prefix: "snapshot")
        let segments = numbers(in: names, prefix: "log")

        var text = ReplicatingText(replica: replica)
        var editIDs = RecentEditIDs()
        var viewStates: [[UInt8]] = []
        var firstSegment = segments.first ?? 1
        var newestSnapshot: Int?
        for number in snapshots.reversed() {
            let name = snapshotName(number)
            do {
                (text, editIDs, viewStates) = try readSnapshot(directory + "/" + name, replica: replica)
                firstSegment = number
                newestSnapshot = number
                break
            } catch {
                warnings.append("\(name) is unusable (\(error)); trying an older state")
            }
        }
        if newestSnapshot == nil, !snapshots.isEmpty, firstSegment > 1 {
            warnings.append("no snapshot is usable and segments before \(segmentName(firstSegment)) are gone: the history starts part-way")
        }

        let replay = views(uri, id)
        replay?.restore(viewStates, document: text)
        var operationCount = 0
        let replayed = segments.filter { $0 >= firstSegment }
        var lastSegmentBytes = 0
        for number in replayed {
            let path = directory + "/" + segmentName(number)
            let bytes = try FileSystem.read(path) ?? []
            lastSegmentBytes = bytes.count
            var scan = LogRecords.scan(bytes, kind: .log)
            var validEnd = scan.validEnd
            var damage = scan.damage
            for (index, payload) in scan.payloads.enumerated() {
                do {
                    let (editID, operations, event) = try decodeOperations(payload)
                    for operation in operations { text.integrate(operation) }
                    if let editID { editIDs.insert(editID) }
                    operationCount += operations.count
                    if let event {
                        replay?.replayed(event, operations: operations, document: text)
                    } else if !operations.isEmpty {
                        replay?.replayed(operations, document: text)
                    }
                } catch {
                    damage = "record \(index + 1) does not decode (\(error))"
                    validEnd = payload.startIndex - LogRecords.headerBytes
                    scan.payloads.removeLast(scan.payloads.count - index)
                    break
                }
            }
            if let damage {
                let dropped = bytes.count - validEnd
                warnings.append("\(segmentName(number)): \(damage); dropped \(dropped) bytes after \(scan.payloads.count) intact records")
                if number == replayed.last {
                    let file = try AppendableFile(path: path, create: false)
                    try file.truncate(to: validEnd)
                    lastSegmentBytes = validEnd
                }
            }
        }

        // Append to the last segment (its header rewritten if it was empty or damaged), or start
        // one after the snapshot. Not kept open: the store opens segments as documents are written.
        let segmentNumber: Int
        if let last = replayed.last {
            segmentNumber = last
            if lastSegmentBytes < LogRecords.magicBytes {
                let file = try AppendableFile(path: directory + "/" + segmentName(last), create: false)
                try file.truncate(to: 0)
                try file.append(LogRecords.Kind.log.magic)
                try file.sync()
                lastSegmentBytes = LogRecords.magicBytes
            }
        } else {
            segmentNumber = max(firstSegment, (segments.last ?? 0) + 1)
            _ = try startSegment(segmentNumber, in: directory)
            lastSegmentBytes = LogRecords.magicBytes
        }
        let files = DocumentFiles(directory: directory, uri: uri, id: id, segment: nil, segmentNumber: segmentNumber, newestSnapshot: newestSnapshot)
        files.logBytesSinceSnapshot = lastSegmentBytes
        files.editIDs = editIDs
        if let newestSnapshot {
            files.lastSnapshotBytes = FileSystem.size(directory + "/" + snapshotName(newestSnapshot)) ?? 0
        }
        let (binding, bindingWarning) = readBinding(directory, replica: replica)
        if let bindingWarning { warnings.append(bindingWarning) }
        return Recovered(files: files, text: text, operationCount: operationCount, binding: binding,
                         shared: metadata["shared"] == .bool(true),
                         sharing: DocumentSharing(json: metadata["sharing"]),
                         warnings: warnings)
    }

    /// A log record's operations, the ID of the editor edit they make up when it has one, and
    /// the view event it records, if it is one.
    private static func decodeOperations(_ payload: ArraySlice<UInt8>) throws
        -> (editID: String?, operations: [ReplicatingArrayOperation<Unicode.Scalar>], event: ViewEvent?) {
        switch payload.first.flatMap(RecordKind.init(rawValue:)) {
        case .operations:
            return (nil, try ReplicatingArrayCoding.decode(Array(payload.dropFirst()), as: Unicode.Scalar.self), nil)
        case .viewEvent:
            let (event, editID, operations) = try ViewEvent.decode(payload.dropFirst())
            return (editID, operations, event)
        case .editOperations:
            let start = payload.startIndex + 2
            guard payload.count >= 2, payload.count >= 2 + Int(payload[payload.startIndex + 1]) else {
                throw StorageError("an edit record's ID is torn")
            }
            let length = Int(payload[payload.startIndex + 1])
            guard let id = String(validating: payload[start..<(start + length)], as: UTF8.self) else {
                throw StorageError("an edit record's ID is not UTF-8")
            }
            return (id, try ReplicatingArrayCoding.decode(Array(payload[(start + length)...]), as: Unicode.Scalar.self), nil)
        default:
            throw StorageError("unknown record kind \(payload.first ?? 0)")
        }
    }

    /// The snapshot record after the state: nothing when there are no IDs.
    static func encodeEditIDs(_ ids: RecentEditIDs) -> [UInt8] {
        guard !ids.all.isEmpty else { return [] }
        var payload = [RecordKind.editIDs.rawValue]
        let count = UInt32(ids.all.count)
        for shift in stride(from: 0, to: 32, by: 8) { payload.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
        for id in ids.all {
            let bytes = Array(id.utf8.prefix(Int(UInt8.max)))
            payload.append(UInt8(bytes.count))
            payload.append(contentsOf: bytes)
        }
        return LogRecords.record(payload)
    }

    private static func decodeEditIDs(_ payload: ArraySlice<UInt8>) throws -> RecentEditIDs {
        var offset = payload.startIndex + 1
        guard payload.count >= 5 else { throw StorageError("its edit IDs are torn") }
        var count = 0
        for i in 0..<4 { count |= Int(payload[offset + i]) << (8 * i) }
        offset += 4
        var ids = RecentEditIDs()
        for _ in 0..<count {
            guard offset < payload.endIndex, payload.endIndex - offset - 1 >= Int(payload[offset]),
                  let id = String(validating: payload[(offset + 1)..<(offset + 1 + Int(payload[offset]))], as: UTF8.self) else {
                throw StorageError("its edit IDs are damaged")
            }
            ids.insert(id)
            offset += 1 + Int(payload[offset])
        }
        return ids
    }

    /// A whole state in the snapshot format.
    static func encodeState(_ text: ReplicatingText) -> [UInt8] {
        var payload = [RecordKind.state.rawValue]
        payload.append(contentsOf: text.encodedState())
        return LogRecords.Kind.snapshot.magic + LogRecords.record(payload)
    }

    /// A snapshot's state, the edit IDs written after it (none in older snapshots) and the
    /// states of the editor views open when it was written.
    private static func readSnapshot(_ path: String, replica: ReplicaID) throws
        -> (text: ReplicatingText, editIDs: RecentEditIDs, views: [[UInt8]]) {
        guard let bytes = try FileSystem.read(path) else { throw StorageError("it is gone") }
        let scan = LogRecords.scan(bytes, kind: .snapshot)
        if let damage = scan.damage { throw StorageError(damage) }
        guard let payload = scan.payloads.first, payload.first == RecordKind.state.rawValue else {
            throw StorageError("it does not start with a state")
        }
        // Written by this daemon: operations still waiting for an element on its way are kept waiting.
        let text = try ReplicatingText(decodingState: Array(payload.dropFirst()), replica: replica, maximumElements: .max,
                                       keepingWaitingOperations: true)
        var editIDs = RecentEditIDs()
        var views: [[UInt8]] = []
        for (index, record) in scan.payloads.enumerated().dropFirst() {
            switch record.first.flatMap(RecordKind.init(rawValue:)) {
            case .editIDs where index == 1: editIDs = try decodeEditIDs(record)
            case .viewState: views.append(Array(record.dropFirst()))
            default: throw StorageError("its record \(index + 1) is neither edit IDs nor a view")
            }
        }
        return (text, editIDs, views)
    }
}
