import Foundation
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// New documents are kept in a pack (one file for a burst of them) until each has its own files
/// (`DocumentFilesMaker`). These tests build what a crash can leave on disk (a pack, with
/// directories missing, unfinished or whole) and check that loading keeps every document the
/// pack holds, lets a whole directory win, ignores a torn tail, bounds what it reads, and that
/// documents touched before they got their own files keep every record.
@Suite struct DocumentPackTests {
    /// A data directory with its store made and released (its lock with it).
    static func dataDirectory() throws -> String {
        let path = DaemonProcess.temporaryDirectory("pack")
        _ = try DocumentStore(path: path, logger: Logger(label: "test"))
        return path
    }

    static func records(_ text: String, replica: UInt64) -> [UInt8] {
        DocumentFiles.firstRecords(ReplicatingText(text, replica: ReplicaID(replica)).operations())
    }

    /// Writes pack `number` under `path` holding `documents` (id, uri, text), synced.
    @discardableResult
    static func writePack(_ path: String, number: Int, _ documents: [(UInt64, String, String)]) throws -> String {
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: number)
        for (id, uri, text) in documents { _ = try pack.appendCreated(id: id, uri: uri, records: records(text, replica: id)) }
        try pack.syncStep()()
        return pack.path
    }

    static func load(_ path: String) throws -> (documents: [UInt64: DocumentStore.LoadedDocument], log: [String]) {
        let capture = LogCapture()
        let store = try DocumentStore(path: path, logger: capture.logger)
        let loaded = store.loadDocuments()
        return (Dictionary(loaded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }), capture.all)
    }

    static func packs(_ path: String) throws -> [String] {
        try FileSystem.list(path + "/" + DocumentPack.directoryName).sorted()
    }

    static func documentDirectory(_ path: String, _ id: UInt64) -> String {
        path + "/documents/" + DocumentFiles.directoryName(for: id)
    }

    static func hasProblems(_ log: [String]) -> Bool {
        log.contains { $0.hasPrefix("warning") || $0.hasPrefix("error") }
    }

    /// A crash after the pack was synced and before any document got its own files: every
    /// document comes back from the pack, with the ones that had their own directory, and the
    /// pack is gone once they are all made; the next load finds plain directories.
    @Test func documentsOnlyInAPackAreMadeFromItAtLoad() throws {
        let path = try Self.dataDirectory()
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "kept", id: 0xAAAA, initial: ReplicatingText("kept\n", replica: ReplicaID(1)).operations())
            store.commit()
        }
        let documents = (1...50 as ClosedRange<UInt64>).map { ($0, "src/file\($0).swift", "let value = \($0)\n") }
        try Self.writePack(path, number: 3, Array(documents.prefix(30)))
        try Self.writePack(path, number: 4, Array(documents.dropFirst(30)) + [(0xEEEE, "empty", "")])
        // Records appended to a document before it had its own files follow it in its pack.
        var typed = ReplicatingText("typed\n", replica: ReplicaID(5))
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 5)
        _ = try pack.appendCreated(id: 0xCCCC, uri: "typed", records: DocumentFiles.firstRecords(typed.operations()))
        _ = try pack.appendCreated(id: 0xDDDD, uri: "other", records: [])
        _ = try pack.appendRecords(id: 0xCCCC, records: DocumentFiles.firstRecords(typed.replace(0..<0, with: Array("more ".unicodeScalars))))
        _ = try pack.appendRecords(id: 0xCCCC, records: DocumentFiles.firstRecords(typed.replace(typed.count..<typed.count, with: Array("end".unicodeScalars))))
        let (loaded, log) = try Self.load(path)
        #expect(loaded[0xCCCC]?.text.string == "more typed\nend")
        #expect(loaded[0xDDDD]?.text.count == 0)
        #expect(loaded.count == 54)
        for (id, uri, text) in documents {
            #expect(loaded[id]?.uri == uri)
            #expect(loaded[id]?.text.string == text, "document \(id)")
        }
        #expect(loaded[0xEEEE]?.text.count == 0)
        #expect(loaded[0xAAAA]?.text.string == "kept\n")
        #expect(!Self.hasProblems(log), "\(log)")
        #expect(try Self.packs(path).isEmpty)
        for (id, _, _) in documents { #expect(FileManager.default.fileExists(atPath: Self.documentDirectory(path, id) + "/log-1")) }
        let (again, secondLog) = try Self.load(path)
        #expect(again.count == 54)
        #expect(again[0xCCCC]?.text.string == "more typed\nend")
        #expect(!secondLog.contains { $0.contains("pack") }, "\(secondLog)")
    }

    /// A crash while the pack's last record was written: cut at every few bytes of it, the
    /// documents before it come back, the torn one does not (it was never acknowledged), the
    /// tear is reported, and the pack is removed once the others are made.
    @Test func aTornPackKeepsTheDocumentsBeforeTheTear() throws {
        let documents = (1...5 as ClosedRange<UInt64>).map { ($0, "doc\($0)", String(repeating: "line \($0)\n", count: 20)) }
        let source = try Self.dataDirectory()
        let packPath = try Self.writePack(source, number: 1, documents)
        let file = try #require(try FileSystem.read(packPath))
        let scan = LogRecords.scan(file, kind: .pack)
        #expect(file[scan.validEnd...].allSatisfy { $0 == 0 }, "the pack is zeros after its records")
        let bytes = Array(file[0..<scan.validEnd])
        let lastStart = try #require(scan.payloads.last).startIndex - LogRecords.headerBytes
        for cut in stride(from: lastStart, to: bytes.count, by: 37) {
            let path = try Self.dataDirectory()
            let copy = path + "/" + DocumentPack.directoryName + "/" + DocumentPack.name(1)
            try Data(bytes[0..<cut]).write(to: URL(fileURLWithPath: copy))
            let (loaded, log) = try Self.load(path)
            #expect(Set(loaded.keys) == [1, 2, 3, 4], "cut at \(cut)")
            for (id, _, text) in documents.prefix(4) { #expect(loaded[id]?.text.string == text) }
            if cut > lastStart {
                #expect(log.contains { $0.hasPrefix("warning") && $0.contains("pack-1") && $0.contains("the 4 documents before it are kept") }, "\(log)")
            }
            #expect(try Self.packs(path).isEmpty)
        }
    }

    /// Damage inside a pack (a record whose checksum holds but whose URI length points past its
    /// end, or a record of no known kind) is reported and ends what is read of that pack, with
    /// nothing allocated for the claimed length; other packs and directories load untouched.
    @Test(arguments: [0, 1])
    func aDamagedPackRecordIsBoundedAndLosesNothingElse(damage: Int) throws {
        let path = try Self.dataDirectory()
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "own", id: 0xBEEF, initial: ReplicatingText("own files\n", replica: ReplicaID(1)).operations())
            store.commit()
        }
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        _ = try pack.appendCreated(id: 1, uri: "before", records: Self.records("before\n", replica: 1))
        var bad: [UInt8] = [damage == 0 ? DocumentPack.RecordKind.created.rawValue : 9]
        DocumentPack.appendLittleEndian(2, bytes: 8, to: &bad)
        DocumentPack.appendLittleEndian(UInt64(UInt32.max), bytes: 4, to: &bad)
        bad += Array("short".utf8)
        let file = try #require(FileHandle(forWritingAtPath: pack.path))
        try file.seek(toOffset: UInt64(pack.size))   // where the pack's next record would go
        file.write(Data(LogRecords.record(bad)))
        try file.close()
        let after = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 2)
        _ = try after.appendCreated(id: 3, uri: "other pack", records: Self.records("other\n", replica: 3))
        let (loaded, log) = try Self.load(path)
        #expect(Set(loaded.keys) == [1, 3, 0xBEEF])
        #expect(loaded[1]?.text.string == "before\n")
        #expect(loaded[3]?.text.string == "other\n")
        #expect(loaded[0xBEEF]?.text.string == "own files\n")
        let expected = damage == 0 ? "claims a URI of 4294967295 bytes" : "is of no known kind"
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("pack-1") && $0.contains(expected) }, "\(log)")
    }

    /// A pack left over with documents that already have their own, whole directory (one edited
    /// since, one edited and snapshotted since): the directories win, nothing is made again, the
    /// edits stay.
    @Test func aWholeDirectoryWinsOverItsPackEntry() throws {
        let path = try Self.dataDirectory()
        var edited = ReplicatingText("first\n", replica: ReplicaID(1))
        var snapshotted = ReplicatingText("one\n", replica: ReplicaID(2))
        let firstRecords = [DocumentFiles.firstRecords(edited.operations()), DocumentFiles.firstRecords(snapshotted.operations())]
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "edited", id: 1, initial: edited.operations())
            store.append(edited.replace(edited.count..<edited.count, with: Array("second\n".unicodeScalars)), toDocument: 1)
            store.commit()
        }
        do {
            let store = try DocumentStore(path: path, snapshotLogBytes: 1, logger: Logger(label: "test"))
            store.create(uri: "snapshotted", id: 2, initial: snapshotted.operations())
            store.append(snapshotted.replace(snapshotted.count..<snapshotted.count, with: Array("two\n".unicodeScalars)), toDocument: 2)
            store.commit()
            store.snapshotDueDocuments { _ in snapshotted }
            store.append(snapshotted.replace(0..<0, with: Array("zero\n".unicodeScalars)), toDocument: 2)
            store.commit()
        }
        #expect(FileManager.default.fileExists(atPath: Self.documentDirectory(path, 2) + "/snapshot-2"), "\((try? FileSystem.list(Self.documentDirectory(path, 2))) ?? [])")
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        _ = try pack.appendCreated(id: 1, uri: "edited", records: firstRecords[0])
        _ = try pack.appendCreated(id: 2, uri: "snapshotted", records: firstRecords[1])
        let (loaded, log) = try Self.load(path)
        #expect(loaded[1]?.text.string == "first\nsecond\n")
        #expect(loaded[2]?.text.string == "zero\none\ntwo\n")
        #expect(!Self.hasProblems(log), "\(log)")
        #expect(!log.contains { $0.contains("made") }, "\(log)")
        #expect(try Self.packs(path).isEmpty)
    }

    /// Directories a crash left unfinished next to a pack that holds their documents: one whose
    /// first segment lost its first record, one without `document.json`, one still under its
    /// `.tmp` name. Each is made again from the pack, said in a warning for the first two.
    @Test func aPartialDirectoryIsMadeAgainFromThePack() throws {
        let path = try Self.dataDirectory()
        let documents: [(UInt64, String, String)] = [(1, "torn log", "one\n"), (2, "no metadata", "two\n"), (3, "tmp", "three\n")]
        try Self.writePack(path, number: 1, documents)
        let torn = Self.documentDirectory(path, 1)
        try DocumentFiles.makeFiles(directory: torn, uri: "torn log", id: 1, records: [])
        let noMetadata = Self.documentDirectory(path, 2)
        try DocumentFiles.makeFiles(directory: noMetadata, uri: "no metadata", id: 2, records: Self.records("two\n", replica: 2))
        try FileManager.default.removeItem(atPath: noMetadata + "/" + DocumentFiles.metadataName)
        try DocumentFiles.writeUnfinished(directory: Self.documentDirectory(path, 3), uri: "tmp", id: 3, records: [])
        let (loaded, log) = try Self.load(path)
        for (id, uri, text) in documents {
            #expect(loaded[id]?.uri == uri)
            #expect(loaded[id]?.text.string == text, "document \(id)")
        }
        #expect(log.filter { $0.hasPrefix("warning") && $0.contains("is made again from") }.count == 2, "\(log)")
        #expect(!log.contains { $0.hasPrefix("error") }, "\(log)")
        #expect(try Self.packs(path).isEmpty)
    }

    /// Under `.sync` the records go into the pack at the commit: a document whose own files the
    /// same read needed (one claimed to be snapshotted) is not in the pack at all, the others
    /// are, one with a sharing record too (a record of its log, which claims nothing); after the
    /// store is let go all three load.
    @Test func aDocumentMadeBeforeTheCommitNeverGoesIntoThePack() throws {
        let path = DaemonProcess.temporaryDirectory("pack")
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            for id in 1...3 as ClosedRange<UInt64> {
                store.create(uri: "doc \(id)", id: id, initial: ReplicatingText("text \(id)\n", replica: ReplicaID(id)).operations())
            }
            #expect(store.settledFiles(2) != nil)
            store.recordSharing(DocumentSharing(), forDocument: 3)
            #expect(try Self.packs(path).isEmpty, "nothing is in a pack before the commit")
            store.commit()
            let packs = try Self.packs(path)
            #expect(packs.count == 1)
            let entries = try packs.flatMap { try DocumentPack.read(path + "/" + DocumentPack.directoryName + "/" + $0).entries }
            #expect(entries.map(\.id) == [1, 3])
        }
        let (loaded, log) = try Self.load(path)
        #expect(loaded.mapValues(\.text.string) == [1: "text 1\n", 2: "text 2\n", 3: "text 3\n"])
        #expect(loaded[3]?.shared == true)
        #expect(loaded[2]?.shared == false)
        #expect(!Self.hasProblems(log), "\(log)")
    }

    /// A document discarded while its pack was on disk does not come back from the pack.
    @Test func aDiscardRecordedInThePackKeepsTheDocumentGone() throws {
        let path = try Self.dataDirectory()
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        _ = try pack.appendCreated(id: 1, uri: "gone", records: [])
        _ = try pack.appendCreated(id: 2, uri: "kept", records: Self.records("kept\n", replica: 2))
        try pack.appendDropped(id: 1)
        let (loaded, log) = try Self.load(path)
        #expect(loaded.keys.sorted() == [2])
        #expect(!Self.hasProblems(log), "\(log)")
    }

    /// Documents touched right after they were created, while the maker's thread gives others
    /// their own files (taken back before it starts them, waited for while it makes them, or
    /// taken once made): every record, sharing record and discard ends as if written at once,
    /// and a commit leaves nothing held.
    @Test func documentsEditedBeforeTheyGotTheirOwnFilesKeepEveryRecord() throws {
        let path = DaemonProcess.temporaryDirectory("pack")
        var texts: [UInt64: ReplicatingText] = [:]
        var discarded: Set<UInt64> = []
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            for id in 1...UInt64(300) {
                let text = ReplicatingText("first \(id)\n", replica: ReplicaID(id))
                texts[id] = text
                store.create(uri: "doc \(id)", id: id, initial: text.operations())
                // Earlier documents, some queued, some being made, some made by now.
                for earlier in [id - 1, id / 2, id / 3] where earlier > 0 && earlier % 5 == id % 5 && !discarded.contains(earlier) {
                    guard var current = texts[earlier] else { continue }
                    store.append(current.replace(current.count..<current.count, with: Array("more \(id)\n".unicodeScalars)), toDocument: earlier)
                    texts[earlier] = current
                }
                if id % 17 == 0 { store.recordSharing(DocumentSharing(), forDocument: id / 2) }
                if id % 29 == 0 {
                    store.discard(documentID: id - 3)
                    discarded.insert(id - 3)
                }
                if id % 50 == 0 { store.commit() }
            }
            store.commit()
            #expect(!store.holdsOutput)
            #expect(store.failure == nil)
        }
        let (loaded, log) = try Self.load(path)
        #expect(loaded.count == 300 - discarded.count)
        for (id, text) in texts where !discarded.contains(id) { #expect(loaded[id]?.text.string == text.string, "document \(id)") }
        for id in discarded { #expect(loaded[id] == nil) }
        #expect(loaded[17]?.shared == true)
        #expect(!Self.hasProblems(log), "\(log)")
        #expect(try Self.packs(path).isEmpty, "every document has its own files once the store is let go")
    }
}
