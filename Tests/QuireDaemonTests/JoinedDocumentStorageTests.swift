import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// What a project joined (or shared) writes for each of its documents, a sharing record, a whole
/// state from the peer and a file binding, is records of the document's log
/// (`DocumentFiles+Records`): into its pack while it has no files of its own, so no document is
/// given a directory on the reply path; into its segment once it has, folded into
/// `document.json` and `file.json` by the next snapshot. These tests check that nothing is made
/// on the reply path, that what a crash leaves (the data directory copied while the store still
/// runs: what `kill -9` leaves) and what the store leaves when let go both load the same texts,
/// holders, epochs and bindings, that an edit afterwards persists, and that snapshots keep them.
@Suite struct JoinedDocumentStorageTests {
    typealias Packs = DocumentPackTests

    static let host = ReplicaID(0xA0)

    static func sharing(_ id: UInt64) -> DocumentSharing {
        var sharing = DocumentSharing()
        sharing.heard(from: host, at: 1_800_000_000 + Double(id))
        sharing.epochs = ["round-\(id % 3)"]
        return sharing
    }

    /// Document `id`'s state as a peer sends it (a history of two replicas).
    static func state(_ id: UInt64) -> ReplicatingText {
        var text = ReplicatingText("let file\(id) = \(id)\n", replica: ReplicaID(0xB000 + id))
        text.replica = ReplicaID(0xC000 + id)
        text.replace(0..<0, with: Array("// joined \(id)\n".unicodeScalars))
        return text
    }

    /// The binding the joiner records once the file is written: its base is the text itself for
    /// even IDs (not copied into the record), an older state for odd ones (copied).
    static func binding(_ id: UInt64, text: ReplicatingText) -> (FileBinding, baseIsText: Bool) {
        let base = id % 2 == 0 ? text : ReplicatingText("older \(id)\n", replica: ReplicaID(0xD000 + id))
        let format = FileFormat(crlf: id % 3 == 0, bom: id % 5 == 0, finalNewline: true)
        return (FileBinding(path: "/project/src/file\(id).swift", hash: String(repeating: "ab", count: 32), base: base, format: format), id % 2 == 0)
    }

    /// The joiner's writes for documents `ids`, as `DocumentRegistry.documentForPeer`,
    /// `OperationRouter.adopt` and `FileBinder` make them.
    static func join(_ ids: ClosedRange<UInt64>, into store: DocumentStore) {
        for id in ids {
            store.create(uri: "@project/\(id)", id: id, initial: [])
            store.recordSharing(sharing(id), forDocument: id)
            let text = state(id)
            store.adopt(text, forDocument: id)
            let (binding, baseIsText) = binding(id, text: text)
            store.record(binding, forDocument: id, baseIsText: baseIsText)
        }
    }

    /// Each of `ids` loaded as joined: text, holders, epochs, binding (path, hash, format, base).
    static func expectJoined(_ loaded: [UInt64: DocumentStore.LoadedDocument], _ ids: ClosedRange<UInt64>, _ when: String,
                             edited: [UInt64: String] = [:]) {
        for id in ids {
            guard let document = loaded[id] else {
                Issue.record("\(when): document \(id) is missing")
                continue
            }
            #expect(document.uri == "@project/\(id)", "\(when)")
            #expect(document.text.string == edited[id] ?? state(id).string, "\(when): document \(id)")
            #expect(document.shared, "\(when): document \(id)")
            #expect(document.sharing.holders == sharing(id).holders, "\(when): document \(id)")
            #expect(document.sharing.epochs == sharing(id).epochs, "\(when): document \(id)")
            let (expected, _) = binding(id, text: state(id))
            #expect(document.binding?.path == expected.path, "\(when): document \(id)")
            #expect(document.binding?.hash == expected.hash, "\(when): document \(id)")
            #expect(document.binding?.format == expected.format, "\(when): document \(id)")
            #expect(document.binding?.base.string == expected.base.string, "\(when): document \(id)")
            #expect(document.binding?.base.versionVector == expected.base.versionVector, "\(when): document \(id)")
        }
    }

    /// What `kill -9` leaves: the data directory as it is now, every write made (the page cache
    /// survives a killed process), copied while the store still runs. The packs are copied
    /// before the documents, and a document directory that goes or is renamed meanwhile (the
    /// maker's thread at work) is skipped: every copy is a state a crash could leave (a pack
    /// goes only once every document in it has its whole directory).
    static func crashCopy(of path: String) throws -> String {
        let copy = DaemonProcess.temporaryDirectory("joined-crash")
        try? FileManager.default.removeItem(atPath: copy)
        for folder in ["", "/" + DocumentPack.directoryName, "/documents"] {
            try FileManager.default.createDirectory(atPath: copy + folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        for name in ["replica", "identity", DocumentPack.directoryName + "/", "documents/"] {
            guard name.hasSuffix("/") else {
                try FileManager.default.copyItem(atPath: path + "/" + name, toPath: copy + "/" + name)
                continue
            }
            for entry in (try? FileSystem.list(path + "/" + name)) ?? [] where !entry.hasSuffix(DocumentFiles.unfinishedSuffix) {
                try? FileManager.default.copyItem(atPath: path + "/" + name + entry, toPath: copy + "/" + name + entry)
            }
        }
        return copy
    }

    @Test(arguments: [DocumentStore.Durability.sync, .batch])
    func aJoinedProjectStaysInItsPackAndLoadsTheSame(durability: DocumentStore.Durability) throws {
        let path = DaemonProcess.temporaryDirectory("joined")
        let ids: ClosedRange<UInt64> = 1...60
        var crashed = ""
        do {
            let store = try DocumentStore(path: path, durability: durability, logger: Logger(label: "test"))
            Self.join(ids, into: store)
            // Nothing was given its own files on the way (the maker's thread waits for a second
            // of quiet after the last write, and under `sync` for the commit's flush).
            #expect(try FileSystem.list(path + "/documents").isEmpty, "a joined document was claimed out of its pack")
            // Under `sync` nothing is told of them before the commit syncs the pack.
            #expect(store.holdsOutput == (durability == .sync))
            store.commit()
            #expect(!store.holdsOutput)
            #expect(store.failure == nil)
            // Every document, its sharing, state and binding, is in the pack (kept while it is
            // the current one and small).
            let packs = try Packs.packs(path)
            #expect(packs.count == 1)
            let entries = try packs.flatMap { try DocumentPack.read(path + "/" + DocumentPack.directoryName + "/" + $0).entries }
            #expect(entries.map(\.id) == Array(ids))
            crashed = try Self.crashCopy(of: path)
        }
        // A crash right after the commit: loading makes every document from the pack.
        let (afterCrash, crashLog) = try Packs.load(crashed)
        #expect(afterCrash.count == ids.count)
        Self.expectJoined(afterCrash, ids, "after a crash")
        #expect(!Packs.hasProblems(crashLog), "\(crashLog)")
        // The store let go: the maker's thread gave each its own files.
        #expect(try Packs.packs(path).isEmpty)
        let (loaded, log) = try Packs.load(path)
        Self.expectJoined(loaded, ids, "after an exit")
        #expect(!Packs.hasProblems(log), "\(log)")
        // An edit afterwards goes to the document's own segment and persists, with the rest.
        do {
            let store = try DocumentStore(path: path, durability: durability, logger: Logger(label: "test"))
            let documents = Dictionary(uniqueKeysWithValues: store.loadDocuments().map { ($0.id, $0) })
            var text = try #require(documents[7]?.text)
            text.replica = ReplicaID(0xE7)
            store.append(text.replace(text.count..<text.count, with: Array("edited\n".unicodeScalars)), toDocument: 7)
            store.commit()
            crashed = try Self.crashCopy(of: path)
        }
        let edited: [UInt64: String] = [7: Self.state(7).string + "edited\n"]
        Self.expectJoined(try Packs.load(crashed).documents, ids, "after an edit and a crash", edited: edited)
        Self.expectJoined(try Packs.load(path).documents, ids, "after an edit", edited: edited)
    }

    /// A document with its own files (made before the peer's state, sharing and binding came):
    /// the records go to its segment, no whole file is written; a snapshot folds sharing and
    /// binding into `document.json` and `file.json`, and a damaged newest snapshot falls back on
    /// the older one with everything still there.
    @Test func recordsOfADocumentWithItsOwnFilesAreKeptAcrossSnapshots() throws {
        let path = DaemonProcess.temporaryDirectory("joined")
        let directory = Packs.documentDirectory(path, 4)
        var current = Self.state(4)
        do {
            let store = try DocumentStore(path: path, logger: Logger(label: "test"))
            store.create(uri: "@project/4", id: 4, initial: [])
            store.finishOwnFiles()
            let metadata = try Data(contentsOf: URL(fileURLWithPath: directory + "/document.json"))
            store.recordSharing(Self.sharing(4), forDocument: 4)
            store.adopt(current, forDocument: 4)
            let (binding, baseIsText) = Self.binding(4, text: current)
            store.record(binding, forDocument: 4, baseIsText: baseIsText)
            store.commit()
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/document.json")) == metadata,
                    "document.json was rewritten on the reply path")
            #expect(!FileManager.default.fileExists(atPath: directory + "/file.json"))
            Self.expectJoined(try Packs.load(try Self.crashCopy(of: path)).documents, 4...4, "logged")
            // Two snapshots, an edit after each: the records are folded before the first.
            let files = try #require(store.files[4])
            for round in 0..<2 {
                try files.writeSnapshot(of: current)
                #expect(FileManager.default.fileExists(atPath: directory + "/file.json"), "round \(round)")
                current.replica = ReplicaID(0xE4)
                store.append(current.replace(0..<0, with: Array("// \(round)\n".unicodeScalars)), toDocument: 4)
                store.commit()
            }
            #expect(store.failure == nil)
        }
        let names = try FileSystem.list(directory)
        let snapshots = DocumentFiles.numbers(in: names, prefix: "snapshot")
        #expect(snapshots.count == 2, "\(names)")
        let (loaded, log) = try Packs.load(path)
        Self.expectJoined(loaded, 4...4, "after snapshots", edited: [4: current.string])
        #expect(!Packs.hasProblems(log), "\(log)")
        // The newest snapshot damaged: the older one and the segments after it give the same.
        let newest = directory + "/" + DocumentFiles.snapshotName(try #require(snapshots.last))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: newest))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: newest))
        let (fallen, fallenLog) = try Packs.load(path)
        Self.expectJoined(fallen, 4...4, "from the older snapshot", edited: [4: current.string])
        #expect(fallenLog.contains { $0.contains("is unusable") }, "\(fallenLog)")
    }

    /// A sharing, state or binding record that does not decode (its checksum holds: damage
    /// written whole) ends what is read of the document's log, like an edit that does not: what
    /// came before it loads, a warning says what was dropped, the next documents load.
    @Test(arguments: ["sharing", "state", "binding"])
    func anUndecodableRecordEndsTheLogThere(kind: String) throws {
        let path = try Packs.dataDirectory()
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        var text = ReplicatingText("before\n", replica: ReplicaID(1))
        _ = try pack.appendCreated(id: 1, uri: "damaged", records: DocumentFiles.firstRecords(text.operations()))
        let bad: [UInt8]
        switch kind {
        case "sharing": bad = [DocumentFiles.RecordKind.sharing.rawValue] + Array("{\"holders\": ".utf8)
        case "state": bad = [DocumentFiles.RecordKind.state.rawValue] + [UInt8](repeating: 0xEE, count: 40)
        default:
            // A binding whose description claims more bytes than the record holds.
            bad = [DocumentFiles.RecordKind.binding.rawValue, 1, 0xFF, 0xFF, 0, 0] + Array("{}".utf8)
        }
        _ = try pack.appendRecords(id: 1, records: LogRecords.record(bad))
        _ = try pack.appendRecords(id: 1, records: DocumentFiles.firstRecords(text.replace(0..<0, with: Array("after ".unicodeScalars))))
        _ = try pack.appendCreated(id: 2, uri: "next", records: Packs.records("next\n", replica: 2))
        try pack.syncStep()()
        let (loaded, log) = try Packs.load(path)
        #expect(loaded[1]?.text.string == "before\n", "\(kind)")
        #expect(loaded[1]?.shared == false && loaded[1]?.binding == nil, "\(kind)")
        #expect(loaded[2]?.text.string == "next\n", "\(kind)")
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("does not decode") }, "\(kind): \(log)")
    }

    /// A crash while the last whole record was being appended to the pack (torn, zeros after):
    /// the records before it load; the torn one was never acknowledged.
    @Test func aTornWholeRecordAtThePacksEndIsDropped() throws {
        let path = try Packs.dataDirectory()
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        _ = try pack.appendCreated(id: 1, uri: "@project/1", records: [])
        _ = try pack.appendRecords(id: 1, records: LogRecords.record(
            [DocumentFiles.RecordKind.sharing.rawValue] + JSONSerializer(sortedKeys: true).serialize(Self.sharing(1).json)))
        let whole = LogRecords.record([DocumentFiles.RecordKind.state.rawValue] + Self.state(1).encodedState())
        var torn: [UInt8] = [DocumentPack.RecordKind.appended.rawValue]
        DocumentPack.appendLittleEndian(1, bytes: 8, to: &torn)
        torn = Array(LogRecords.record(torn + whole).prefix(30))
        let file = try #require(FileHandle(forWritingAtPath: pack.path))
        try file.seek(toOffset: UInt64(pack.size))
        file.write(Data(torn))
        try file.close()
        let (loaded, log) = try Packs.load(path)
        #expect(loaded[1]?.text.string == "")
        #expect(loaded[1]?.sharing.holders == Self.sharing(1).holders)
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("the 1 documents before it are kept") }, "\(log)")
        #expect(try Packs.packs(path).isEmpty, "a torn last record goes with its pack")
    }
}
