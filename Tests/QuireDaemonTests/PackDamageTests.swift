import Foundation
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Packs damaged on disk between runs (bits flipped, lengths out of bounds, tails of zeros, files
/// that are not the user's regular files, a pack whose document ID is taken by another document):
/// loading keeps every intact document, says what it skipped, and never crashes or hangs.
@Suite struct PackDamageTests {
    typealias Packs = DocumentPackTests

    static func packPath(_ path: String, _ number: Int) -> String {
        path + "/" + DocumentPack.directoryName + "/" + DocumentPack.name(number)
    }

    /// A document loaded from its own files, then the store let go.
    static func makeOwnDocument(_ path: String, id: UInt64, uri: String, text: String) throws {
        let store = try DocumentStore(path: path, logger: Logger(label: "test"))
        var document = ReplicatingText("", replica: ReplicaID(id))
        store.create(uri: uri, id: id, initial: [])
        store.append(document.replace(0..<0, with: Array(text.unicodeScalars)), toDocument: id)
        store.commit()
    }

    /// A record whose checksum holds but whose content is damage (a huge URI length, a URI of
    /// 64 KiB + 1), and a record whose checksum fails, each between two good ones; a record
    /// header claiming 4 GiB; a torn record followed by zeros: the documents before the damage
    /// load, the damage is named, nothing after it is taken, other packs load.
    @Test(arguments: ["uri64k+1", "checksum", "huge length", "torn then zeros"])
    func damageInAPackKeepsWhatComesBefore(damage: String) throws {
        let path = try Packs.dataDirectory()
        try Self.makeOwnDocument(path, id: 0xBEEF, uri: "own", text: "own files\n")
        let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
        _ = try pack.appendCreated(id: 1, uri: "before", records: Packs.records("before\n", replica: 1))
        var bad: [UInt8]
        switch damage {
        case "uri64k+1":
            var payload: [UInt8] = [DocumentPack.RecordKind.created.rawValue]
            DocumentPack.appendLittleEndian(2, bytes: 8, to: &payload)
            DocumentPack.appendLittleEndian(UInt64(DocumentPack.maximumURIBytes + 1), bytes: 4, to: &payload)
            payload += [UInt8](repeating: UInt8(ascii: "a"), count: DocumentPack.maximumURIBytes + 1)
            bad = LogRecords.record(payload)
        case "checksum":
            var payload: [UInt8] = [DocumentPack.RecordKind.created.rawValue]
            DocumentPack.appendLittleEndian(2, bytes: 8, to: &payload)
            DocumentPack.appendLittleEndian(3, bytes: 4, to: &payload)
            payload += Array("bad".utf8)
            bad = LogRecords.record(payload)
            bad[5] ^= 0xFF
        case "huge length":
            bad = [0xFF, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 7, count: 8) + Array("payload".utf8)
        default:
            bad = Array(LogRecords.record([DocumentPack.RecordKind.created.rawValue] + [UInt8](repeating: 1, count: 40)).prefix(20))
            bad += [UInt8](repeating: 0, count: 4096)
        }
        let file = try #require(FileHandle(forWritingAtPath: pack.path))
        try file.seek(toOffset: UInt64(pack.size))
        file.write(Data(bad))
        if damage != "torn then zeros" {
            var after: [UInt8] = [DocumentPack.RecordKind.created.rawValue]
            DocumentPack.appendLittleEndian(4, bytes: 8, to: &after)
            DocumentPack.appendLittleEndian(5, bytes: 4, to: &after)
            after += Array("after".utf8) + Packs.records("after\n", replica: 4)
            file.write(Data(LogRecords.record(after)))
        }
        try file.close()
        let other = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 2)
        _ = try other.appendCreated(id: 3, uri: "other pack", records: Packs.records("other\n", replica: 3))
        let (loaded, log) = try Packs.load(path)
        #expect(Set(loaded.keys) == [1, 3, 0xBEEF], "\(damage): \(loaded.keys)")
        #expect(loaded[1]?.text.string == "before\n")
        #expect(loaded[3]?.text.string == "other\n")
        #expect(loaded[0xBEEF]?.text.string == "own files\n")
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("pack-1") && $0.contains("the 1 documents before it are kept") }, "\(damage): \(log)")
        // A pack damaged before its end is set aside whole, not removed, and not loaded again; a
        // torn last record (a crash's) goes with its pack.
        let packs = try FileManager.default.contentsOfDirectory(atPath: path + "/" + DocumentPack.directoryName)
        #expect(!packs.contains(DocumentPack.name(1)), "\(damage): \(packs)")
        if damage == "torn then zeros" {
            #expect(!packs.contains { $0.hasPrefix("damaged-") }, "\(damage): \(packs)")
            return
        }
        let aside = try #require(packs.first { $0.hasPrefix("damaged-pack-1-") }, "\(damage): \(packs)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: path + "/" + DocumentPack.directoryName + "/" + aside))
        #expect(kept.range(of: Data(bad)) != nil, "\(damage): the set-aside pack lost its damaged record")
        let (again, _) = try Packs.load(path)
        #expect(Set(again.keys) == [1, 3, 0xBEEF], "\(damage): a second load saw \(again.keys)")
    }

    /// A pack that is not the user's regular file (a symbolic link to a good pack, a directory,
    /// a file of another user's, a FIFO no one writes to): it is not read, an error names it,
    /// it is kept, and every other document loads. Loading does not hang on the FIFO.
    @Test(arguments: ["symlink", "directory", "other user", "fifo"])
    func aPackThatIsNotTheUsersOwnFileIsSkipped(kind: String) throws {
        let path = try Packs.dataDirectory()
        try Self.makeOwnDocument(path, id: 0xBEEF, uri: "own", text: "own files\n")
        try Packs.writePack(path, number: 2, [(3, "good pack", "good\n")])
        let bad = Self.packPath(path, 1)
        switch kind {
        case "symlink":
            let elsewhere = try Packs.dataDirectory()
            let target = try Packs.writePack(elsewhere, number: 1, [(9, "planted", "planted\n")])
            try FileManager.default.createSymbolicLink(atPath: bad, withDestinationPath: target)
        case "directory":
            try FileManager.default.createDirectory(atPath: bad, withIntermediateDirectories: false)
        case "other user":
            let pack = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 1)
            _ = try pack.appendCreated(id: 9, uri: "planted", records: Packs.records("planted\n", replica: 9))
            guard chown(bad, 65534, 65534) == 0 else { return }   // not root: cannot plant another user's file
        default:
            #expect(mkfifo(bad, 0o600) == 0)
        }
        let (loaded, log) = try Packs.load(path)
        #expect(Set(loaded.keys) == [3, 0xBEEF], "\(kind): \(loaded.keys)")
        #expect(loaded[3]?.text.string == "good\n")
        #expect(log.contains { $0.hasPrefix("error") && $0.contains("pack-1") && $0.contains("the pack is kept") }, "\(kind): \(log)")
        var info = stat()
        #expect(lstat(bad, &info) == 0, "\(kind): the pack is left where it is")
    }

    /// A pack named with the largest number (planted, or damage in the directory listing) does
    /// not stop the store from opening: its next pack number is bounded, not overflowed.
    @Test func aPackNumberAtTheLimitDoesNotStopTheStore() throws {
        let path = try Packs.dataDirectory()
        try Self.makeOwnDocument(path, id: 0xBEEF, uri: "own", text: "own files\n")
        let planted = path + "/" + DocumentPack.directoryName + "/pack-\(Int.max)"
        #expect(FileManager.default.createFile(atPath: planted, contents: Data("QUIRPAK1".utf8), attributes: [.posixPermissions: 0o600]))
        let store = try DocumentStore(path: path, durability: .batch, logger: Logger(label: "test"))
        #expect(store.loadDocuments().map(\.id) == [0xBEEF])
        store.create(uri: "new", id: 7, initial: ReplicatingText("new\n", replica: ReplicaID(7)).operations())
        store.commit()
        #expect(store.failure == nil)
    }

    /// A pack entry whose ID is that of another document here, with its own name and history
    /// (two documents under one ID: damage, or a pack from another data directory): the
    /// document in its directory is kept with every edit, the collision is named, and the
    /// pack's entry does not replace it.
    @Test func aPackEntryCollidingWithAnotherDocumentDoesNotReplaceIt() throws {
        let path = try Packs.dataDirectory()
        try Self.makeOwnDocument(path, id: 0xBEEF, uri: "mine", text: "my edits\n")
        try Packs.writePack(path, number: 1, [(0xBEEF, "someone else", "theirs\n"), (5, "fine", "fine\n")])
        let (loaded, log) = try Packs.load(path)
        #expect(loaded[0xBEEF]?.uri == "mine")
        #expect(loaded[0xBEEF]?.text.string == "my edits\n")
        #expect(loaded[5]?.text.string == "fine\n")
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("someone else") }, "\(log)")
    }
}
