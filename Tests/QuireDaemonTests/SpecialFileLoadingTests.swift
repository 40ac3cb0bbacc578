import Foundation
import Testing
@testable import QuireDaemon

/// A FIFO or a directory standing where a document's own file should be (planted, or damage):
/// loading does not hang on it, says which file it is, and every other document loads.
@Suite struct SpecialFileLoadingTests {
    typealias Packs = DocumentPackTests

    final class Outcome: @unchecked Sendable {
        let lock = NSCondition()
        var result: (documents: [UInt64: DocumentStore.LoadedDocument], log: [String])?
        var error: Error?
        var done = false
    }

    @Test(arguments: ["document.json", "log-1"], ["fifo", "directory"])
    func aSpecialFileInADocumentsDirectoryHangsNothing(file: String, kind: String) throws {
        let path = try Packs.dataDirectory()
        try PackDamageTests.makeOwnDocument(path, id: 0xBEEF, uri: "own", text: "own files\n")
        try PackDamageTests.makeOwnDocument(path, id: 0xCAFE, uri: "planted on", text: "other\n")
        let planted = Packs.documentDirectory(path, 0xCAFE) + "/" + file
        try FileManager.default.removeItem(atPath: planted)
        if kind == "fifo" {
            #expect(mkfifo(planted, 0o600) == 0)
        } else {
            try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        }
        // Loaded on a thread of its own, so a hang fails this test instead of the run.
        let outcome = Outcome()
        Thread {
            do {
                let result = try Packs.load(path)
                outcome.lock.lock(); outcome.result = result
            } catch {
                outcome.lock.lock(); outcome.error = error
            }
            outcome.done = true
            outcome.lock.broadcast()
            outcome.lock.unlock()
        }.start()
        outcome.lock.lock()
        defer { outcome.lock.unlock() }
        let deadline = Date().addingTimeInterval(20)
        while !outcome.done && outcome.lock.wait(until: deadline) {}
        try #require(outcome.done, "loading hung on a \(kind) at \(file)")
        #expect(outcome.error == nil, "\(kind) at \(file): \(String(describing: outcome.error))")
        let loaded = try #require(outcome.result)
        #expect(loaded.documents[0xBEEF]?.text.string == "own files\n", "\(kind) at \(file): \(loaded.documents.keys)")
        #expect(loaded.documents[0xCAFE] == nil, "\(kind) at \(file): a document without its \(file) loaded")
        #expect(loaded.log.contains { $0.contains(file) }, "\(kind) at \(file): nothing said: \(loaded.log)")
    }
}
