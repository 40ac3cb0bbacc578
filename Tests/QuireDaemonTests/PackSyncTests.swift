import Foundation
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Under `--durability sync` a commit syncs every pack appended to since the last one, not only
/// the current pack: a pack sealed part-way through a commit's flush (a burst larger than a pack
/// takes), or an older pack that still holds a queued document its records were appended to.
@Suite struct PackSyncTests {
    @Test func aCommitSyncsEveryPackAppendedTo() throws {
        let path = DaemonProcess.temporaryDirectory("packsync")
        let packs = path + "/" + DocumentPack.directoryName
        try FileManager.default.createDirectory(atPath: packs, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: path + "/documents", withIntermediateDirectories: true)
        // Packs sealed at 1 KiB: a burst of 20 documents of 200 bytes each fills several.
        let maker = DocumentFilesMaker(packsPath: packs, documentsPath: path + "/documents", firstNumber: 1, sealedBytes: 1 << 10)
        let records = DocumentPackTests.records(String(repeating: "x", count: 200), replica: 1)
        for id in 1...20 as ClosedRange<UInt64> {
            try maker.create(id: id, uri: "doc \(id)", directory: path + "/documents/\(id)", records: records, deferred: true)
        }
        func commit() throws {
            try maker.flush()
            let (steps, succeeded) = maker.syncSteps()
            for step in steps { try step() }
            succeeded()
        }
        try commit()
        #expect(maker.packs.count > 1)
        #expect(maker.packs.values.allSatisfy { !$0.pack.hasUnsyncedData }, "a pack sealed by the flush was left unsynced")
        #expect(!maker.hasUnsyncedPack)
        // A record of document 1, still queued in the first (sealed) pack (unless the maker's
        // thread, after a second of quiet on a loaded machine, already started it).
        if try maker.appendIfQueued(1, records: records) {
            #expect(maker.hasUnsyncedPack, "an append to an older pack must hold the output")
            try commit()
            #expect(maker.packs.values.allSatisfy { !$0.pack.hasUnsyncedData }, "an older pack appended to was left unsynced")
        }
        maker.finish()
    }
}
