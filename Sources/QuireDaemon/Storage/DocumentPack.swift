import Glibc

/// A pack: one file holding the first records of many new documents, so that a burst of them
/// (a project opened) costs one inode and one sync instead of a directory and two files each.
/// `packs/pack-N` starts with `QUIRPAK1`, then records framed as in a log (`LogRecords`):
/// `[1][id: UInt64 LE][URI length: UInt32 LE][URI: UTF-8][the document's first log records]`
/// for a document created, `[3][id: UInt64 LE][log records]` for records appended to it before it
/// had its own files, `[2][id: UInt64 LE]` for one discarded after it.
///
/// The file is extended with zeros ahead of the records, `zeroedBytes` at a time, so that most
/// syncs write over blocks the file already has: `fdatasync` then changes no metadata and waits
/// for no journal commit (on a disk other processes keep busy, one costs milliseconds). Reading
/// stops at the zeros after the last record.
///
/// Guarantees: `append` writes the record at once (a `kill -9` cannot take it) and `sync` puts
/// everything appended on stable storage. A pack is only appended to; the store removes it once
/// every document in it has its own files durably (`DocumentFilesMaker`). `read` keeps every
/// record before a torn or damaged one, bounds every length before using it, and says what
/// it dropped. Not thread-safe: the maker's lock orders appends and removal.
final class DocumentPack {
    static let directoryName = "packs"
    /// Longest URI a pack record may claim (longer is damage, not allocated).
    static let maximumURIBytes = 1 << 16

    let path: String
    let number: Int
    private let fd: Int32
    /// Where the next record goes: the end of the records.
    private(set) var size: Int
    /// The file's length: the records, then zeros.
    private var allocated = 0
    /// How much the file grows by, in zeros, when a record does not fit.
    static let zeroedBytes = 2 << 20
    /// Appended to since the last `sync`.
    private(set) var hasUnsyncedData = false
    /// Removed from disk: nothing is appended any more, its documents all have their own files.
    var isRemoved = false

    enum RecordKind: UInt8 {
        case created = 1
        case dropped = 2
        case appended = 3
    }

    static func name(_ number: Int) -> String { "pack-\(number)" }

    /// Creates pack `number` in `directory` with its header (not synced: `sync` does it, and the
    /// store syncs `directory` for its entry).
    init(in directory: String, number: Int) throws {
        path = directory + "/" + Self.name(number)
        self.number = number
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StorageError.system("open", path) }
        fd = descriptor
        size = 0
        do { try write(LogRecords.Kind.pack.magic) } catch {
            close(fd)
            unlink(path)
            throw error
        }
    }

    deinit { close(fd) }

    /// Records a new document and its first log records (framed as in its segment, after the
    /// segment's header); returns where those records start in the pack.
    func appendCreated(id: UInt64, uri: String, records: [UInt8]) throws -> Int {
        let uriBytes = Array(uri.utf8)
        var payload: [UInt8] = [RecordKind.created.rawValue]
        payload.reserveCapacity(13 + uriBytes.count + records.count)
        Self.appendLittleEndian(id, bytes: 8, to: &payload)
        Self.appendLittleEndian(UInt64(uriBytes.count), bytes: 4, to: &payload)
        payload += uriBytes
        let recordsOffset = size + LogRecords.headerBytes + payload.count
        payload += records
        try write(LogRecords.record(payload))
        return recordsOffset
    }

    /// Records more log records of document `id`, created in this pack; returns where they start.
    func appendRecords(id: UInt64, records: [UInt8]) throws -> Int {
        var payload: [UInt8] = [RecordKind.appended.rawValue]
        payload.reserveCapacity(9 + records.count)
        Self.appendLittleEndian(id, bytes: 8, to: &payload)
        let recordsOffset = size + LogRecords.headerBytes + payload.count
        payload += records
        try write(LogRecords.record(payload))
        return recordsOffset
    }

    /// Records that document `id`, created in this pack, was discarded: loading does not make it.
    func appendDropped(id: UInt64) throws {
        var payload: [UInt8] = [RecordKind.dropped.rawValue]
        Self.appendLittleEndian(id, bytes: 8, to: &payload)
        try write(LogRecords.record(payload))
    }

    private func write(_ bytes: [UInt8]) throws {
        if size + bytes.count > allocated {
            let target = (size + bytes.count + Self.zeroedBytes - 1) / Self.zeroedBytes * Self.zeroedBytes
            let zeros = [UInt8](repeating: 0, count: min(target - allocated, 1 << 20))
            while allocated < target {
                let piece = min(zeros.count, target - allocated)
                try writeAll(zeros[0..<piece], at: allocated)
                allocated += piece
            }
        }
        try writeAll(bytes[...], at: size)
        size += bytes.count
        hasUnsyncedData = true
    }

    private func writeAll(_ bytes: ArraySlice<UInt8>, at offset: Int) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes[(bytes.startIndex + done)...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw StorageError.system("write", path) }
            done += n
        }
    }

    /// `length` bytes at `offset` (a document's records, for making its files).
    func read(offset: Int, length: Int) throws -> [UInt8] {
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress.map { $0 + done }, length - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw StorageError.system("read", path) }
            done += n
        }
        return bytes
    }

    func startWriteback() { FileSystem.startWriteback(fd) }

    /// A step for the commit's syncs: what was appended so far on stable storage.
    func syncStep() -> () throws -> Void {
        // Holds the pack (and so its descriptor) until the step has run.
        { [self] in guard fdatasync(fd) == 0 else { throw StorageError.system("fdatasync", path) } }
    }

    func syncSucceeded() { hasUnsyncedData = false }

    static func appendLittleEndian(_ value: UInt64, bytes: Int, to payload: inout [UInt8]) {
        for i in 0..<bytes { payload.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i))) }
    }

    // MARK: Reading

    /// A document a pack holds: its name, ID and first log records.
    struct Entry {
        let id: UInt64
        let uri: String
        var records: [UInt8]
    }

    /// What a pack holds: its documents not discarded after, in creation order, and a
    /// description of the damage that ended it (nil when it ends cleanly).
    struct Contents {
        var entries: [Entry] = []
        var damage: String?
        /// The damage is a torn last record (what a crash leaves): nothing but zeros lies past
        /// the extent its header claims. Otherwise records may follow the damage unread.
        var damageIsTornTail = false
    }

    /// The most a pack can hold as this daemon writes it: sealed once past `sealedPackBytes`, so
    /// at most one largest record and the zeroed room past that. A larger file is refused
    /// before it is read (a sparse or planted file must not take the memory).
    static let maximumBytes = DocumentFilesMaker.sealedPackBytes + zeroedBytes + LogRecords.headerBytes + LogRecords.maximumPayloadBytes

    /// Reads the pack at `path`. A torn or damaged record ends what is read, like a log's tail;
    /// every length is bounded by what follows before anything is taken. The file must be the
    /// user's own regular file (`OwnedFiles`), never a link.
    static func read(_ path: String) throws -> Contents {
        let bytes = try OwnedFiles.read(path, limit: maximumBytes) ?? []
        let scan = LogRecords.scan(bytes, kind: .pack)
        // Zeros after the last record are the room made ahead for more, not damage.
        let zeroTail = scan.validEnd > 0 && bytes[scan.validEnd...].allSatisfy { $0 == 0 }
        // Damage inside a whole record (its checksum holds): records may follow it.
        var recordDamage: String?
        var live: [UInt64: Int] = [:]
        var entries: [Entry?] = []
        for (index, payload) in scan.payloads.enumerated() {
            guard let kind = payload.first.flatMap(RecordKind.init(rawValue:)), payload.count >= 9 else {
                recordDamage = "record \(index + 1) is of no known kind"
                break
            }
            let id = littleEndian(payload, at: payload.startIndex + 1, bytes: 8)
            if kind == .dropped {
                if let at = live.removeValue(forKey: id) { entries[at] = nil }
                continue
            }
            if kind == .appended {
                // Records of a document created earlier in this pack (none: damage, not allocated).
                guard let at = live[id] else {
                    recordDamage = "record \(index + 1) adds to a document the pack does not hold"
                    break
                }
                entries[at]?.records += payload.dropFirst(9)
                continue
            }
            let uriStart = payload.startIndex + 13
            guard payload.count >= 13 else {
                recordDamage = "record \(index + 1) is a torn document header"
                break
            }
            let uriLength = Int(littleEndian(payload, at: payload.startIndex + 9, bytes: 4))
            guard uriLength <= maximumURIBytes, payload.endIndex - uriStart >= uriLength,
                  let uri = String(validating: payload[uriStart..<(uriStart + uriLength)], as: UTF8.self) else {
                recordDamage = "record \(index + 1) claims a URI of \(uriLength) bytes that is not there or not UTF-8"
                break
            }
            if let at = live[id] { entries[at] = nil }
            live[id] = entries.count
            entries.append(Entry(id: id, uri: uri, records: Array(payload[(uriStart + uriLength)...])))
        }
        var contents = Contents(entries: entries.compactMap { $0 })
        if let recordDamage {
            contents.damage = recordDamage
        } else if !zeroTail, let damage = scan.damage {
            contents.damage = damage
            contents.damageIsTornTail = nothingButZeros(bytes, afterRecordAt: scan.validEnd)
        }
        return contents
    }

    /// Whether every byte past the record that starts at `start` is zero: the extent its header
    /// claims, or only its header when the claim is beyond any record's (then the claim itself
    /// is damage, and whatever follows may be records).
    private static func nothingButZeros(_ bytes: [UInt8], afterRecordAt start: Int) -> Bool {
        guard start < bytes.count else { return true }
        var claimed = bytes.count - start >= 4 ? Int(littleEndian(bytes[...], at: start, bytes: 4)) : 0
        if claimed > LogRecords.maximumPayloadBytes { claimed = 0 }
        let end = min(bytes.count, start + LogRecords.headerBytes + claimed)
        return bytes[end...].allSatisfy { $0 == 0 }
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>, at start: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<count { value |= UInt64(bytes[start + i]) << UInt64(8 * i) }
        return value
    }
}
