import EditingTraces
import Foundation
import Logging
import QuireDaemon
import ReplicatingTypes

/// Durability's price: typing through the daemon with edits synced before each acknowledgement
/// (`sync`), written at once and synced on a timer (`batch`), and kept in memory only; disk
/// bytes per edit; and the cold start of a document with a 1,000,000-operation history.
struct StorageBenchmark {
    struct Typing {
        var mode: String
        var edits: Int
        var editsPerSecond: Double
        var diskBytes: Int
    }

    struct ColdStart {
        var policy: String
        var operations: Int
        var seconds: Double
        var diskBytes: Int
        var characters: Int
    }

    struct Result {
        var typing: [Typing] = []
        var coldStarts: [ColdStart] = []
        /// Writing the snapshot of a 3 MB document (it happens on the daemon's event loop).
        var largeSnapshotSeconds = 0.0
        var largeSnapshotBytes = 0
    }

    let trace: EditingTrace?

    func run() throws -> Result {
        var result = Result()
        // Keystrokes one per read (an editor at typing pace: every edit its own fsync) ...
        result.typing.append(try type(mode: "sync, one edit per read", durability: .sync, edits: 2_000, perRead: 1))
        result.typing.append(try type(mode: "batch, one edit per read", durability: .batch, edits: 20_000, perRead: 1))
        result.typing.append(try type(mode: "memory, one edit per read", durability: nil, edits: 20_000, perRead: 1))
        // ... and pipelined (a paste, a script): one fsync per 64 KB read.
        result.typing.append(try type(mode: "sync, pipelined", durability: .sync, edits: 100_000, perRead: 280))
        result.typing.append(try type(mode: "batch, pipelined", durability: .batch, edits: 100_000, perRead: 280))
        result.typing.append(try type(mode: "memory, pipelined", durability: nil, edits: 100_000, perRead: 280))
        (result.largeSnapshotSeconds, result.largeSnapshotBytes) = try snapshotOfLargeDocument()
        if let trace {
            result.coldStarts.append(try coldStart(trace, policy: "log only", snapshotLogBytes: Int.max))
            result.coldStarts.append(try coldStart(trace, policy: "default (snapshots)", snapshotLogBytes: 1 << 20))
        }
        return result
    }

    static func diskBytes(_ path: String) -> Int {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        for case let name as String in enumerator {
            total += (try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0
        }
        return total
    }

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "quire-bench-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func type(mode: String, durability: DocumentStore.Durability?, edits: Int, perRead: Int) throws -> Typing {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let store = try durability.map { try DocumentStore(path: path + "/data", durability: $0, logger: logger) }
        var next: UInt64 = 0
        let daemon = Daemon(logger: logger, replicaSource: { next += 1; return ReplicaID(next) }, store: store)
        var replies = 0
        let typist = EditorConnection(daemon: daemon) { _ in replies += 1 }
        typist.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
        typist.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#))
        let frames = DaemonBenchmark.typing(edits, requestIDsFrom: 3)
        let reads = stride(from: 0, to: edits, by: perRead).map { frames[$0..<min($0 + perRead, edits)].flatMap { $0 } }
        let start = DispatchTime.now().uptimeNanoseconds
        for read in reads { typist.receive(read) }
        daemon.syncStorage()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard replies == edits + 2 else { throw StorageBenchmarkError("\(replies) replies for \(edits + 2) requests") }
        return Typing(mode: mode, edits: edits, editsPerSecond: Double(edits) / seconds, diskBytes: Self.diskBytes(path))
    }

    /// The time to fold the log of a 3 MB document into a snapshot, and the snapshot's size.
    private func snapshotOfLargeDocument() throws -> (Double, Int) {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let store = try DocumentStore(path: path, snapshotLogBytes: 1024, logger: logger)
        let text = ReplicatingText(DocumentBenchmark.makeText(), replica: ReplicaID(1))
        store.create(uri: "large", id: 1, initial: text.operations())
        store.commit()
        let start = DispatchTime.now().uptimeNanoseconds
        store.snapshotDueDocuments { _ in text }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let snapshot = (try? FileManager.default.contentsOfDirectory(atPath: path + "/documents/0000000000000001"))?
            .first { $0.hasPrefix("snapshot-") }
        let bytes = snapshot.flatMap { try? FileManager.default.attributesOfItem(atPath: path + "/documents/0000000000000001/" + $0)[.size] as? Int } ?? 0
        return (seconds, bytes)
    }

    /// The trace replayed until the history holds a million operations (each replay appended
    /// after the text so far), one record per keystroke as typing writes them; then the time to
    /// open the data directory and load the document.
    private func coldStart(_ trace: EditingTrace, policy: String, snapshotLogBytes: Int) throws -> ColdStart {
        let path = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        var operations = 0
        var expected: String
        do {
            let store = try DocumentStore(path: path, durability: .batch, snapshotLogBytes: snapshotLogBytes, logger: logger)
            var text = ReplicatingText(replica: ReplicaID(1))
            store.create(uri: "history", id: 1, initial: [])
            while operations < 1_000_000 {
                let offset = text.count
                for patch in trace.patches {
                    var ops: [ReplicatingArrayOperation<Unicode.Scalar>] = []
                    if patch.removeCount > 0 { ops += text.replace((offset + patch.position)..<(offset + patch.position + patch.removeCount), with: []) }
                    if !patch.insert.isEmpty { ops += text.replace((offset + patch.position)..<(offset + patch.position), with: patch.insert) }
                    store.append(ops, toDocument: 1)
                    operations += ops.count
                    let current = text
                    store.snapshotDueDocuments { _ in current }
                }
            }
            store.commit()
            expected = text.string
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let store = try DocumentStore(path: path, logger: logger)
        let loaded = store.loadDocuments()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard loaded.first?.text.string == expected else { throw StorageBenchmarkError("the reloaded document differs") }
        return ColdStart(policy: policy, operations: operations, seconds: seconds, diskBytes: Self.diskBytes(path), characters: expected.unicodeScalars.count)
    }
}

struct StorageBenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
