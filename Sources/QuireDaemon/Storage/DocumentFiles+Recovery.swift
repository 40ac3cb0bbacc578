import Glibc
import JSON
import ReplicatingTypes

/// Reading a document back from its directory after a restart or a crash, and the record
/// and snapshot encodings recovery reads.
extension DocumentFiles {
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
        guard let metadataBytes = try FileSystem.read(directory + "/" + metadataName, limit: maximumDescriptionBytes) else {
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
        // The last sharing and binding records replayed win over `document.json` and `file.json`.
        var loggedSharing: DocumentSharing?
        var loggedBinding: FileBinding??
        let replayed = segments.filter { $0 >= firstSegment }
        var lastSegmentBytes = 0
        for number in replayed {
            let path = directory + "/" + segmentName(number)
            let bytes = try FileSystem.read(path, limit: maximumLogFileBytes) ?? []
            lastSegmentBytes = bytes.count
            var scan = LogRecords.scan(bytes, kind: .log)
            var validEnd = scan.validEnd
            var damage = scan.damage
            for (index, payload) in scan.payloads.enumerated() {
                do {
                    switch payload.first.flatMap(RecordKind.init(rawValue:)) {
                    case .state:
                        // A peer's whole state (`DocumentFiles+Records`): the document from here on.
                        text = try decodeStateRecord(payload, replica: replica)
                        continue
                    case .sharing:
                        loggedSharing = try decodeSharingRecord(payload)
                        continue
                    case .binding:
                        loggedBinding = .some(try decodeBindingRecord(payload, text: text, replica: replica))
                        continue
                    default:
                        break
                    }
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
        let files = DocumentFiles(recoveredIn: directory, uri: uri, id: id, segmentNumber: segmentNumber, newestSnapshot: newestSnapshot,
                                  logBytesSinceSnapshot: lastSegmentBytes, editIDs: editIDs)
        files.unfoldedSharing = loggedSharing
        files.unfoldedBinding = loggedBinding
        let (binding, bindingWarning) = loggedBinding.map { ($0, nil) } ?? readBinding(directory, replica: replica)
        if let bindingWarning { warnings.append(bindingWarning) }
        return Recovered(files: files, text: text, operationCount: operationCount, binding: binding,
                         shared: metadata["shared"] == .bool(true) || loggedSharing != nil,
                         sharing: loggedSharing ?? DocumentSharing(json: metadata["sharing"]),
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
    static func readSnapshot(_ path: String, replica: ReplicaID) throws
        -> (text: ReplicatingText, editIDs: RecentEditIDs, views: [[UInt8]]) {
        guard let bytes = try FileSystem.read(path, limit: maximumLogFileBytes) else { throw StorageError("it is gone") }
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
