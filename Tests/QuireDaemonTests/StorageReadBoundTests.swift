import Foundation
import Glibc
import Logging
import QuireProtocol
import Testing
@testable import QuireDaemon
import ReplicatingTypes
import QuireTestSupport

/// Every file the store and a project's record read is bounded by the most Quire ever writes
/// there, checked on the file's stated size before anything is allocated for it: a sparse file of
/// 1 TiB planted in the data directory (or a damaged file system's size) is refused with a
/// message naming the file and its size, the file is left as it is, and every other document
/// (or the rest of the record) loads.
@Suite struct StorageReadBoundTests {
    typealias Packs = DocumentPackTests
    static let tebibyte: Int = 1 << 40

    /// Makes `path` a sparse file of 1 TiB (created, or grown from what it holds).
    static func makeHuge(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        try #require(fd >= 0, "open \(path): errno \(errno)")
        defer { close(fd) }
        try #require(ftruncate(fd, off_t(tebibyte)) == 0, "a sparse file of 1 TiB")
    }

    /// Two documents, each in its own directory; `plant` then makes one of `first`'s files huge.
    private func load(planting plant: (String) throws -> Void) throws -> (documents: [UInt64: DocumentStore.LoadedDocument], log: [String], directory: String) {
        let path = try Packs.dataDirectory()
        try PackDamageTests.makeOwnDocument(path, id: 0xA1, uri: "first", text: "first text\n")
        try PackDamageTests.makeOwnDocument(path, id: 0xB2, uri: "second", text: "second text\n")
        let directory = Packs.documentDirectory(path, 0xA1)
        try plant(directory)
        let (loaded, log) = try Packs.load(path)
        return (loaded, log, directory)
    }

    @Test func aHugeLogSegmentIsRefusedNamedAndKeptAndTheOtherDocumentsLoad() throws {
        let (loaded, log, directory) = try load { try Self.makeHuge($0 + "/" + DocumentFiles.segmentName(1)) }
        #expect(Set(loaded.keys) == [0xB2], "\(loaded.keys)")
        #expect(log.contains { $0.contains(directory + "/log-1 holds \(Self.tebibyte) bytes, more than the \(DocumentFiles.maximumLogFileBytes)") }, "\(log)")
        #expect(FileSystem.size(directory + "/log-1") == Self.tebibyte, "the segment is left as it is")
    }

    @Test func aHugeSnapshotIsNamedAndTheDocumentLoadsFromItsLog() throws {
        let (loaded, log, directory) = try load { try Self.makeHuge($0 + "/" + DocumentFiles.snapshotName(7)) }
        #expect(Set(loaded.keys) == [0xA1, 0xB2], "\(loaded.keys)")
        #expect(loaded[0xA1]?.text.string == "first text\n")
        #expect(log.contains { $0.contains("snapshot-7 is unusable") && $0.contains("holds \(Self.tebibyte) bytes") }, "\(log)")
        #expect(FileSystem.size(directory + "/snapshot-7") == Self.tebibyte)
    }

    @Test func aHugeDocumentDescriptionIsRefusedNamed() throws {
        let (loaded, log, directory) = try load { try Self.makeHuge($0 + "/" + DocumentFiles.metadataName) }
        #expect(Set(loaded.keys) == [0xB2], "\(loaded.keys)")
        #expect(log.contains { $0.contains(directory + "/" + DocumentFiles.metadataName + " holds \(Self.tebibyte) bytes") }, "\(log)")
    }

    @Test func aHugeBindingIsDroppedNamedAndTheDocumentLoads() throws {
        let (loaded, log, _) = try load { try Self.makeHuge($0 + "/" + DocumentFiles.bindingName) }
        #expect(Set(loaded.keys) == [0xA1, 0xB2], "\(loaded.keys)")
        #expect(loaded[0xA1]?.binding == nil)
        #expect(log.contains { $0.contains("file binding is unusable") && $0.contains("holds \(Self.tebibyte) bytes") }, "\(log)")
    }

    @Test func aHugeIdentityKeyIsRefusedNamedNotReplaced() throws {
        let path = try Packs.dataDirectory()
        let identity = path + "/identity"
        try #require(FileSystem.size(identity) != nil, "the store made its key")
        try Self.makeHuge(identity)
        #expect(throws: StorageError.self) { _ = try DocumentStore(path: path, logger: Logger(label: "test")) }
        #expect(FileSystem.size(identity) == Self.tebibyte, "the key is not replaced")
    }

    /// A project's record with a huge `tree` is refused naming it; a huge `known.json` (a cache
    /// of what was on disk) is left unread and the record loads.
    @Test func aProjectRecordBoundsItsTreeAndKnownFiles() throws {
        let data = DaemonProcess.temporaryDirectory("record-bound")
        let secret = try PeerSecret.material(from: PeerSecret.generate())
        let key = DocumentScope.projectKey(secret: secret)
        let project = SharedProject(key: key, name: "bounded", root: "/tmp/bounded", role: .host, secret: secret,
                                    fingerprint: "f", addresses: [], relay: nil, replica: ReplicaID(5))
        let record = ProjectRecordFile(dataDirectory: data, key: key)
        try record.save(project)
        try record.saveTree(project.tree)
        try record.saveKnown(project)
        try Self.makeHuge(record.directory + "/known.json")
        #expect(try record.load(replica: ReplicaID(5)).known.isEmpty)
        try Self.makeHuge(record.directory + "/tree")
        #expect {
            _ = try record.load(replica: ReplicaID(5))
        } throws: { error in
            "\(error)".contains(record.directory + "/tree holds \(Self.tebibyte) bytes")
        }
    }
}
