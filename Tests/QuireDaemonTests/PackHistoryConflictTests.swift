import Foundation
import Logging
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// A pack's entry and a document directory of the same ID and the same name but another history
/// (damage, a pack copied from elsewhere): loading never drops the directory's history for the
/// entry unless the pack holds every byte of it. The directory is loaded with its edits, the
/// entry is not, a warning says so, and the pack is set aside (`conflicting-pack-N-...`, never
/// loaded again) rather than removed, so the entry's history stays on disk too.
@Suite struct PackHistoryConflictTests {
    typealias Packs = DocumentPackTests

    /// The directory of document 7 ("same") with `text` typed into it and committed.
    private func editedDirectory(_ path: String, text: String) throws {
        let store = try DocumentStore(path: path, logger: Logger(label: "test"))
        var document = ReplicatingText("", replica: ReplicaID(70))
        store.create(uri: "same", id: 7, initial: [])
        store.append(document.replace(0..<0, with: Array(text.unicodeScalars)), toDocument: 7)
        store.commit()
    }

    private func expectKeptAside(_ path: String, _ log: [String]) throws {
        #expect(log.contains { $0.hasPrefix("warning") && $0.contains("with another history than") }, "\(log)")
        let packs = try Packs.packs(path)
        #expect(packs.count == 1 && packs[0].hasPrefix("conflicting-pack-1-"), "\(packs)")
    }

    @Test func anEditedDirectoryIsNotReplacedByAPackEntryOfAnotherHistory() throws {
        let path = try Packs.dataDirectory()
        try editedDirectory(path, text: "the directory's edits\n")
        try Packs.writePack(path, number: 1, [(7, "same", "the pack's text\n"), (8, "other", "other\n")])
        let (loaded, log) = try Packs.load(path)
        #expect(loaded[7]?.text.string == "the directory's edits\n")
        #expect(loaded[8]?.text.string == "other\n", "the pack's other entries load")
        try expectKeptAside(path, log)
    }

    /// A first segment of other records, shorter than the entry's: not a crash's leftover of the
    /// entry (that is a prefix of it), so it is another history too.
    @Test func aShorterSegmentOfOtherRecordsIsNotReplacedEither() throws {
        let path = try Packs.dataDirectory()
        let directory = Packs.documentDirectory(path, 7)
        try DocumentFiles.makeFiles(directory: directory, uri: "same", id: 7, records: Packs.records("mine\n", replica: 71))
        try Packs.writePack(path, number: 1, [(7, "same", "a longer text in the pack\n")])
        let (loaded, log) = try Packs.load(path)
        #expect(loaded[7]?.text.string == "mine\n")
        try expectKeptAside(path, log)
    }

    /// The standing of each case, directly: what a crash leaves (nothing, the header alone, a
    /// prefix of the entry, no `document.json`) is made again; anything more is kept.
    @Test func onlyWhatThePackHoldsWholeIsMadeAgain() throws {
        let path = try Packs.dataDirectory()
        let records = Packs.records("pack\n", replica: 9)
        let directory = Packs.documentDirectory(path, 9)
        #expect(DocumentFiles.standing(of: directory, id: 9, uri: "u", records: records) == .remake)
        try DocumentFiles.makeFiles(directory: directory, uri: "u", id: 9, records: Array(records.prefix(5)))
        #expect(DocumentFiles.standing(of: directory, id: 9, uri: "u", records: records) == .remake, "a torn first record")
        try FileManager.default.removeItem(atPath: directory + "/" + DocumentFiles.metadataName)
        #expect(DocumentFiles.standing(of: directory, id: 9, uri: "u", records: records) == .remake, "no document.json")
        DocumentFiles.removeTree(directory)
        try DocumentFiles.makeFiles(directory: directory, uri: "u", id: 9, records: records + [1, 2, 3])
        #expect(DocumentFiles.standing(of: directory, id: 9, uri: "u", records: records) == .held)
        DocumentFiles.removeTree(directory)
        try DocumentFiles.makeFiles(directory: directory, uri: "u", id: 9, records: [])
        try FileSystem.writeAtomically(LogRecords.Kind.log.magic + [1], to: directory + "/" + DocumentFiles.segmentName(2))
        if case .otherHistory = DocumentFiles.standing(of: directory, id: 9, uri: "u", records: records) {} else {
            Issue.record("a later segment with records is another history")
        }
    }
}
