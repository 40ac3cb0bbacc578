import Foundation
import Glibc
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// A pack larger than this daemon ever writes one (here a sparse file of 1 TiB in the data
/// directory) is refused before it is read, naming its size: its memory is never asked for, the
/// pack stays, and every other document loads.
@Suite struct PackSizeBoundTests {
    typealias Packs = DocumentPackTests

    @Test func aPackLargerThanAnyPackWrittenIsNotRead() throws {
        let path = try Packs.dataDirectory()
        try PackDamageTests.makeOwnDocument(path, id: 0xBEEF, uri: "own", text: "own files\n")
        let other = try DocumentPack(in: path + "/" + DocumentPack.directoryName, number: 2)
        _ = try other.appendCreated(id: 3, uri: "other pack", records: Packs.records("other\n", replica: 3))
        let huge = PackDamageTests.packPath(path, 1)
        let fd = open(huge, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        try #require(ftruncate(fd, 1 << 40) == 0, "a sparse file of 1 TiB")
        close(fd)

        #expect(throws: StorageError.self) { try DocumentPack.read(huge) }
        let (loaded, log) = try Packs.load(path)
        #expect(Set(loaded.keys) == [3, 0xBEEF], "\(loaded.keys)")
        #expect(log.contains { $0.contains("pack-1") && $0.contains("holds \(1 << 40) bytes, more than the \(DocumentPack.maximumBytes)") }, "\(log)")
        #expect(FileManager.default.fileExists(atPath: huge), "the pack is kept")
    }
}
