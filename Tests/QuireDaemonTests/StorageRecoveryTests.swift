import EditingTraces
import Foundation
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Log lines kept for assertions (what recovery says it dropped).
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    var all: [String] { lock.withLock { lines } }
    func add(_ line: String) { lock.withLock { lines.append(line) } }

    var logger: Logger {
        Logger(label: "test") { _ in CapturingHandler(capture: self) }
    }

    struct CapturingHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.add("\(event.level): \(event.message)")
        }
    }
}

/// A document typed at random into a store, one record per step, with the text after each
/// record kept so that recovery can be checked against exactly what was logged.
struct StoredHistory {
    let path: String
    let id: UInt64 = 0xD0C
    var textAfterRecord: [String] = [""]

    /// Types `records` random edits into a fresh store at `path` and commits each. With
    /// `compacting`, every snapshot drops all tombstones first (as for a document no peer holds).
    init(path: String, records: Int, seed: UInt64, snapshotLogBytes: Int = 1 << 20, compacting: Bool = false) throws {
        self.path = path
        var random = SeededRandom(seed: seed)
        let store = try DocumentStore(path: path, snapshotLogBytes: snapshotLogBytes, logger: Logger(label: "test"))
        var text = ReplicatingText(replica: ReplicaID(7))
        store.create(uri: "doc", id: id, initial: [])
        let alphabet: [String] = ["a", "b", "\n", "é", "😀", "xyz"]
        for _ in 0..<records {
            var operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []
            if text.count > 3 && Int.random(in: 0..<4, using: &random) == 0 {
                let start = Int.random(in: 0..<text.count, using: &random)
                operations = text.replace(start..<min(start + 3, text.count), with: [])
            } else {
                let at = Int.random(in: 0...text.count, using: &random)
                operations = text.replace(at..<at, with: Array((alphabet.randomElement(using: &random) ?? "a").unicodeScalars))
            }
            store.append(operations, toDocument: id)
            store.commit()
            var current = text
            if compacting { current.dropTombstones() }
            store.snapshotDueDocuments { _ in current }
            textAfterRecord.append(text.string)
        }
        #expect(store.failure == nil)
    }

    var documentDirectory: String { path + "/documents/" + DocumentFiles.directoryName(for: id) }

    func files(_ prefix: String) -> [Int] {
        DocumentFiles.numbers(in: (try? FileSystem.list(documentDirectory)) ?? [], prefix: prefix)
    }

    /// Opens the store again and returns the document's text and what was logged.
    func recover() throws -> (text: String?, log: [String]) {
        let capture = LogCapture()
        let store = try DocumentStore(path: path, logger: capture.logger)
        let documents = store.loadDocuments()
        return (documents.first { $0.id == id }?.text.string, capture.all)
    }
}

@Suite struct StorageRecoveryTests {
    @Test func everyRecordComesBackAcrossSnapshotsAndTheReplicaIsKept() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        // The first store is released (and its lock with it) before the history opens its own.
        let replica = try { try DocumentStore(path: path, logger: Logger(label: "test")).replica }()
        let history = try StoredHistory(path: path, records: 600, seed: 1, snapshotLogBytes: 1024)
        #expect(history.files("snapshot").count == 2, "this snapshot and the previous one are kept")
        #expect((history.files("log").first ?? 0) >= (history.files("snapshot").first ?? 0), "segments before the previous snapshot are removed")
        let (text, log) = try history.recover()
        #expect(text == history.textAfterRecord.last)
        #expect(!log.contains { $0.hasPrefix("warning") || $0.hasPrefix("error") }, "\(log)")
        #expect(try DocumentStore(path: path, logger: Logger(label: "test")).replica == replica)
    }

    @Test func theDataDirectoryIsPrivateAndLocked() throws {
        let path = DaemonProcess.temporaryDirectory("store") + "/nested/data"
        let store = try DocumentStore(path: path, logger: Logger(label: "test"))
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o700)
        #expect(throws: StorageError.self) { try DocumentStore(path: path, logger: Logger(label: "test")) }
        do {
            _ = try DocumentStore(path: path, logger: Logger(label: "test"))
        } catch {
            #expect("\(error)".contains("in use by another quire (pid \(getpid()))"))
        }
        _ = store
    }

    /// A crash can leave the last record half written: cut the log at every byte of its last
    /// two records. Recovery keeps every whole record before the cut, says what it dropped,
    /// and cuts the tail so that later appends follow intact data.
    @Test func aTornTailIsCutOffAtEveryPossibleByte() throws {
        let source = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: source, records: 30, seed: 2)
        let segment = history.documentDirectory + "/log-1"
        let bytes = try #require(try FileSystem.read(segment))
        let starts = LogRecords.scan(bytes, kind: .log).payloads.map { $0.startIndex - LogRecords.headerBytes }
        #expect(starts.count == 30)
        for cut in stride(from: starts[starts.count - 2], to: bytes.count, by: 3) {
            let copy = DaemonProcess.temporaryDirectory("torn")
            try FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: source, toPath: copy)
            let copied = StoredHistory.at(copy, like: history)
            try Data(bytes[0..<cut]).write(to: URL(fileURLWithPath: copied.documentDirectory + "/log-1"))
            let complete = Self.completeRecords(starts: starts, total: bytes.count, cut: cut)
            let goodEnd = complete == 0 ? LogRecords.magicBytes : Self.end(of: complete - 1, starts: starts, total: bytes.count)
            let (text, log) = try copied.recover()
            #expect(text == history.textAfterRecord[complete], "cut at \(cut)")
            if cut != goodEnd {
                #expect(log.contains { $0.contains("log-1") && $0.contains("dropped \(cut - goodEnd) bytes after \(complete) intact records") },
                        "cut at \(cut): \(log)")
            }
            // The tail is gone from disk: the next recovery is clean.
            let (again, secondLog) = try copied.recover()
            #expect(again == text)
            #expect(!secondLog.contains { $0.hasPrefix("warning") }, "\(secondLog)")
        }
    }

    /// Where record `index` ends.
    static func end(of index: Int, starts: [Int], total: Int) -> Int {
        index + 1 < starts.count ? starts[index + 1] : total
    }

    /// How many records are whole in a log cut at `cut`.
    static func completeRecords(starts: [Int], total: Int, cut: Int) -> Int {
        (0..<starts.count).filter { end(of: $0, starts: starts, total: total) <= cut }.count
    }

    @Test func aDamagedRecordKeepsEverythingBeforeIt() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: path, records: 30, seed: 3)
        let segment = history.documentDirectory + "/log-1"
        var bytes = try #require(try FileSystem.read(segment))
        let payloads = LogRecords.scan(bytes, kind: .log).payloads
        bytes[payloads[12].startIndex + 1] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: segment))
        let (text, log) = try history.recover()
        #expect(text == history.textAfterRecord[12])
        #expect(log.contains { $0.contains("fails its checksum") && $0.contains("after 12 intact records") }, "\(log)")
    }

    @Test func aDamagedNewestSnapshotFallsBackToThePreviousOneWithNothingLost() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: path, records: 500, seed: 4, snapshotLogBytes: 1024)
        let newest = try #require(history.files("snapshot").last)
        let snapshot = history.documentDirectory + "/snapshot-\(newest)"
        var bytes = try #require(try FileSystem.read(snapshot))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: snapshot))
        let (text, log) = try history.recover()
        #expect(text == history.textAfterRecord.last)
        #expect(log.contains { $0.contains("snapshot-\(newest) is unusable") }, "\(log)")
    }

    @Test(arguments: [false, true])
    func compactedSnapshotsRecoverEverythingAndFallBackWithNothingLost(damageNewest: Bool) throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: path, records: 500, seed: 8, snapshotLogBytes: 1024, compacting: true)
        let newest = try #require(history.files("snapshot").last)
        let snapshot = history.documentDirectory + "/snapshot-\(newest)"
        var bytes = try #require(try FileSystem.read(snapshot))
        if damageNewest {
            bytes[bytes.count / 2] ^= 0xFF
            try Data(bytes).write(to: URL(fileURLWithPath: snapshot))
        }
        let (text, log) = try history.recover()
        #expect(text == history.textAfterRecord.last)
        #expect(log.contains { $0.contains("snapshot-\(newest) is unusable") } == damageNewest, "\(log)")
        let loaded = try #require(try DocumentStore(path: path, logger: Logger(label: "test")).loadDocuments().first)
        #expect(loaded.text.scalars.compactedCount > 0, "the state came from a compacted (document-order) snapshot")
    }

    @Test func aTruncatedSnapshotAndAWrongHeaderAreReported() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: path, records: 500, seed: 5, snapshotLogBytes: 1024)
        for number in history.files("snapshot") {
            let snapshot = history.documentDirectory + "/snapshot-\(number)"
            let bytes = try #require(try FileSystem.read(snapshot))
            try Data(bytes.prefix(bytes.count - 5)).write(to: URL(fileURLWithPath: snapshot))
        }
        let (text, log) = try history.recover()
        #expect(text != nil)
        #expect(log.contains { $0.contains("no snapshot is usable") }, "\(log)")
        // A segment that does not start with the log header is dropped whole, and said so.
        let last = try #require(history.files("log").last)
        try Data("not a log".utf8).write(to: URL(fileURLWithPath: history.documentDirectory + "/log-\(last)"))
        let (_, secondLog) = try history.recover()
        #expect(secondLog.contains { $0.contains("log-\(last): the file does not start with QUIRLOG1") }, "\(secondLog)")
    }

    /// Documents created in one burst (a project opened in one read) are synced together at the
    /// commit: until then `holdsOutput` keeps every reply back under `.sync`, also for documents
    /// whose segment was closed unsynced to keep few descriptors open; after it they all load.
    @Test func documentsCreatedInABurstShareTheCommit() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let count = DocumentStore.maximumOpenSegments * 3
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            #expect(!store.holdsOutput)
            for id in 1...UInt64(count) {
                store.create(uri: "file \(id).swift", id: id, initial: ReplicatingText("let x = \(id)\n", replica: ReplicaID(id)).operations())
                #expect(store.holdsOutput)
            }
            #expect(store.openSegmentCount <= DocumentStore.maximumOpenSegments)
            store.commit()
            #expect(!store.holdsOutput)
            #expect(store.failure == nil)
            // An empty document too: its creation alone holds output until the commit.
            store.create(uri: "empty", id: UInt64(count + 1), initial: [])
            #expect(store.holdsOutput)
            store.commit()
            #expect(!store.holdsOutput)
        }
        let log = LogCapture()
        let store = try DocumentStore(path: path, logger: log.logger)
        let documents = store.loadDocuments()
        #expect(documents.count == count + 1)
        #expect(documents.first { $0.id == 5 }?.text.string == "let x = 5\n")
        #expect(documents.first { $0.id == UInt64(count) }?.uri == "file \(count).swift")
        #expect(documents.first { $0.uri == "empty" }?.text.count == 0)
        #expect(!log.all.contains { $0.hasPrefix("warning") || $0.hasPrefix("error") }, "\(log.all)")
    }

    /// A new document's own files are made on another thread (`DocumentFilesMaker`): records
    /// appended right after it was created, a sharing record written before it had its own
    /// files, and a document discarded before it had them all end as if written at once: after
    /// the commit every kept document loads with each of its records, and the discarded one
    /// left nothing.
    @Test func newDocumentsWrittenOnTheMakersThreadKeepEveryRecord() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        var texts: [UInt64: ReplicatingText] = [:]
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            for id in 1...UInt64(40) {
                let text = ReplicatingText("first \(id)\n", replica: ReplicaID(id))
                texts[id] = text
                store.create(uri: "doc \(id)", id: id, initial: text.operations())
                // Every fourth earlier document takes a record while its files are being written.
                if id > 1, id % 4 == 0, var earlier = texts[id - 1] {
                    store.append(earlier.replace(earlier.count..<earlier.count, with: Array("more\n".unicodeScalars)), toDocument: id - 1)
                    texts[id - 1] = earlier
                }
                if id == 7 { store.recordSharing(DocumentSharing(), forDocument: id) }
            }
            store.create(uri: "gone", id: 99, initial: ReplicatingText("gone\n", replica: ReplicaID(99)).operations())
            store.discard(documentID: 99)
            #expect(store.holdsOutput)
            store.commit()
            #expect(!store.holdsOutput)
            #expect(store.failure == nil)
        }
        #expect(!FileManager.default.fileExists(atPath: path + "/documents/" + DocumentFiles.directoryName(for: 99)))
        let log = LogCapture()
        let documents = try DocumentStore(path: path, logger: log.logger).loadDocuments()
        #expect(documents.count == 40)
        for document in documents { #expect(document.text.string == texts[document.id]?.string, "document \(document.id)") }
        #expect(documents.first { $0.id == 3 }?.text.string == "first 3\nmore\n")
        #expect(documents.first { $0.id == 7 }?.shared == true)
        #expect(!log.all.contains { $0.hasPrefix("warning") || $0.hasPrefix("error") }, "\(log.all)")
    }

    /// A document directory a crash stopped being made (still under its `.tmp` name) held no
    /// acknowledged document: loading removes it, with no error, and loads the others.
    @Test func anUnfinishedCreationIsRemovedAtLoad() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "kept", id: 1, initial: ReplicatingText("kept\n", replica: ReplicaID(1)).operations())
            store.commit()
        }
        let unfinished = path + "/documents/" + DocumentFiles.directoryName(for: 2) + DocumentFiles.unfinishedSuffix
        try FileManager.default.createDirectory(atPath: unfinished, withIntermediateDirectories: false)
        let log = LogCapture()
        let store = try DocumentStore(path: path, logger: log.logger)
        let documents = store.loadDocuments()
        #expect(documents.map(\.uri) == ["kept"])
        #expect(!FileManager.default.fileExists(atPath: unfinished))
        #expect(!log.all.contains { $0.hasPrefix("warning") || $0.hasPrefix("error") }, "\(log.all)")
    }

    /// A `.batch` store writes a new document at once, into its pack (a `kill -9` cannot take
    /// it): read back before any commit, the pack holds it; once the store is let go it has its
    /// own files and the pack is gone.
    @Test func aBatchStoreWritesNewDocumentsAtOnce() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        do {
            let store = try DocumentStore(path: path, durability: .batch, logger: Logger(label: "test"))
            store.create(uri: "notes", id: 42, initial: ReplicatingText("kept\n", replica: ReplicaID(1)).operations())
            #expect(!store.holdsOutput)
            let packs = try FileSystem.list(path + "/" + DocumentPack.directoryName)
            let entries = try packs.flatMap { try DocumentPack.read(path + "/" + DocumentPack.directoryName + "/" + $0).entries }
            // The maker's thread may have made its own files and removed the pack already.
            if packs.isEmpty {
                #expect(FileManager.default.fileExists(atPath: path + "/documents/" + DocumentFiles.directoryName(for: 42)))
            } else {
                #expect(entries.map(\.uri) == ["notes"])
                #expect(entries.first?.records == DocumentFiles.firstRecords(ReplicatingText("kept\n", replica: ReplicaID(1)).operations()))
            }
        }
        #expect(try FileSystem.list(path + "/" + DocumentPack.directoryName).isEmpty)
        let recovered = try DocumentFiles.recover(path + "/documents/" + DocumentFiles.directoryName(for: 42), replica: ReplicaID(2))
        #expect(recovered.files.uri == "notes")
        #expect(recovered.text.string == "kept\n")
        #expect(recovered.warnings.isEmpty, "\(recovered.warnings)")
    }

    /// Thousands of documents must not need thousands of descriptors (the usual limit is 1024):
    /// only the recently written ones keep their segment open, and loading opens none.
    @Test func manyDocumentsKeepFewDescriptorsOpen() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            for id in 1...300 as ClosedRange<UInt64> {
                var text = ReplicatingText(replica: ReplicaID(id))
                store.create(uri: "doc \(id)", id: id, initial: [])
                store.append(text.replace(0..<0, with: Array("text of \(id)\n".unicodeScalars)), toDocument: id)
                store.commit()
            }
            #expect(store.failure == nil)
            #expect(store.openSegmentCount <= DocumentStore.maximumOpenSegments)
            // Writing to a closed one reopens it.
            store.append(ReplicatingText("more", replica: ReplicaID(1001)).operations(), toDocument: 1)
            store.commit()
            #expect(store.failure == nil)
        }
        let store = try DocumentStore(path: path, logger: Logger(label: "test"))
        let documents = store.loadDocuments()
        #expect(documents.count == 300)
        #expect(store.openSegmentCount == 0)
        #expect(documents.first { $0.id == 7 }?.text.string == "text of 7\n")
        #expect(documents.first { $0.id == 1 }?.text.string.contains("more") == true)
    }

    @Test func anUnreadableDocumentIsSkippedAndTheOthersLoad() throws {
        let path = DaemonProcess.temporaryDirectory("store")
        let history = try StoredHistory(path: path, records: 10, seed: 6)
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "other", id: 0xB0B, initial: ReplicatingText("second", replica: ReplicaID(9)).operations())
            store.commit()
        }
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: history.documentDirectory + "/document.json"))
        try FileManager.default.createDirectory(atPath: path + "/documents/stray", withIntermediateDirectories: true)
        let capture = LogCapture()
        let documents = try DocumentStore(path: path, logger: capture.logger).loadDocuments()
        #expect(documents.map(\.uri) == ["other"])
        #expect(documents.first?.text.string == "second")
        #expect(capture.all.contains { $0.hasPrefix("error") && $0.contains("document.json is damaged") }, "\(capture.all)")
        #expect(capture.all.contains { $0.contains("stray has no document.json") }, "\(capture.all)")
    }
}

extension StoredHistory {
    /// The same history, read from a copy of its directory.
    static func at(_ path: String, like history: StoredHistory) -> StoredHistory {
        StoredHistory(copyOf: history, path: path)
    }

    private init(copyOf history: StoredHistory, path: String) {
        self.path = path
        textAfterRecord = history.textAfterRecord
    }
}
