import Glibc
import JSON
import ReplicatingTypes

/// The file a document is bound to: a `binding` record in its log (in its pack while it has no
/// files of its own), folded at its next snapshot into `file.json` and the base state, `file-base`.
extension DocumentFiles {
    // MARK: File binding

    static let bindingName = "file.json"
    static let bindingBaseName = "file-base"

    /// Records `binding` (nil: none) as a log record, `[8][0]` for none, `[8][1][JSON length:
    /// UInt32 LE][file.json][base state]`, or `[8][2][JSON length][file.json]` when the base is
    /// the document as its log holds it at this record (`baseIsText`: a binding made as the file
    /// was written or read, the common case, costs no second copy of the text). Durable at the
    /// next sync, as an edit; no file is replaced and a packed document stays in its pack.
    func writeBinding(_ binding: FileBinding?, baseIsText: Bool = false) throws {
        var payload: [UInt8] = [RecordKind.binding.rawValue]
        if let binding {
            let description = Self.bindingDescription(binding)
            payload.append(baseIsText ? 2 : 1)
            DocumentPack.appendLittleEndian(UInt64(description.count), bytes: 4, to: &payload)
            payload += description
            if !baseIsText { payload += binding.base.encodedState() }
        } else {
            payload.append(0)
        }
        try appendRecord(LogRecords.record(payload))
        unfoldedBinding = .some(binding)
    }

    /// Writes `binding` (nil: none) as `file.json` and `file-base`: the base state first, then
    /// `file.json`, each atomically, so `file.json` never names a hash whose base is not on disk.
    /// What a snapshot folds the binding records of the segments it replaces into.
    func writeBindingFiles(_ binding: FileBinding?) throws {
        guard let binding else {
            FileSystem.remove(directory + "/" + Self.bindingName)
            FileSystem.remove(directory + "/" + Self.bindingBaseName)
            try FileSystem.syncDirectory(directory)
            return
        }
        try FileSystem.writeAtomically(Self.encodeState(binding.base), to: directory + "/" + Self.bindingBaseName)
        try FileSystem.writeAtomically(Self.bindingDescription(binding), to: directory + "/" + Self.bindingName)
    }

    /// `file.json`: the path, the hash and the format.
    static func bindingDescription(_ binding: FileBinding) -> [UInt8] {
        var description: [String: JSONValue] = ["path": .string(binding.path)]
        if let hash = binding.hash { description["sha256"] = .string(hash) }
        description["lineEnding"] = .string(binding.format.crlf ? "crlf" : "lf")
        description["bom"] = .bool(binding.format.bom)
        description["finalNewline"] = .bool(binding.format.finalNewline)
        return JSONSerializer(sortedKeys: true).serialize(.object(description))
    }

    /// The binding `file.json`'s `bytes` describe, with `base`.
    static func binding(described bytes: [UInt8], base: ReplicatingText) throws -> FileBinding {
        let description = try JSONParser().parse(bytes)
        guard let path = description["path"]?.stringValue else { throw StorageError("it names no path") }
        // A binding recorded before formats were kept reads as `.plain` (written as the text is).
        let format = FileFormat(crlf: description["lineEnding"] == .string("crlf"), bom: description["bom"] == .bool(true),
                                finalNewline: description["finalNewline"] == .bool(true))
        return FileBinding(path: path, hash: description["sha256"]?.stringValue, base: base, format: format)
    }

    /// A binding log record's binding (nil: none); `text` is the document as the log holds it at
    /// the record. Every length is checked against the record before anything is taken.
    static func decodeBindingRecord(_ payload: ArraySlice<UInt8>, text: ReplicatingText, replica: ReplicaID) throws -> FileBinding? {
        guard payload.count >= 2 else { throw StorageError("a binding record is torn") }
        let form = payload[payload.startIndex + 1]
        if form == 0 { return nil }
        guard form == 1 || form == 2, payload.count >= 6 else { throw StorageError("a binding record is of no known form") }
        var length = 0
        for i in 0..<4 { length |= Int(payload[payload.startIndex + 2 + i]) << (8 * i) }
        let start = payload.startIndex + 6
        guard payload.endIndex - start >= length else { throw StorageError("a binding record claims \(length) bytes it does not hold") }
        var base = text
        if form == 1 {
            base = try ReplicatingText(decodingState: Array(payload[(start + length)...]), replica: replica, maximumElements: .max,
                                       keepingWaitingOperations: true)
        }
        return try binding(described: Array(payload[start..<(start + length)]), base: base)
    }

    /// The binding recorded in `directory`'s files, if any; a damaged one is reported and dropped.
    static func readBinding(_ directory: String, replica: ReplicaID) -> (FileBinding?, warning: String?) {
        do {
            guard let bytes = try FileSystem.read(directory + "/" + bindingName, limit: maximumDescriptionBytes) else { return (nil, nil) }
            let base = try readSnapshot(directory + "/" + bindingBaseName, replica: replica).text
            return (try binding(described: bytes, base: base), nil)
        } catch {
            return (nil, "its file binding is unusable (\(error)); bind the file again")
        }
    }
}
