import EditingTraces
import Foundation
import JSON
import Logging
import QuireDaemon
import ReplicatingTypes

/// Projects and fresh text: what a document created from text costs in memory and on disk, and a
/// project of N files opened through `document/open` on the in-process daemon with the durable
/// store (total time, memory, disk), then a daemon restart loading it.
struct ProjectBenchmark {
    struct Fresh {
        var name: String
        var characters = 0
        var utf8Bytes = 0
        var heapBytes = 0
        var logBytes = 0
        var snapshotBytes = 0
        var statistics = ""
    }

    struct Project {
        var mode: String
        var files = 0
        var characters = 0
        var utf8Bytes = 0
        var seconds = 0.0
        var reads = 0
        var heapBytes = 0
        var residentBytes = 0
        var diskBytes = 0
        /// Until every document has its own files (made off the reply path after its pack).
        var ownFilesSeconds = 0.0
        var restartSeconds = 0.0
        var restartHeapBytes = 0
        var restartedDocuments = 0
    }

    struct Result {
        var source = ""
        var fresh: [Fresh] = []
        var projects: [Project] = []
    }

    let sizes: [Int]
    /// Which parts run: `fresh`, `durable` (64 KiB reads, each size), `one-read` and `memory`
    /// (2,000 files, when the sizes hold it).
    var parts: Set<String> = ["fresh", "durable", "one-read", "memory"]
    /// Leaves the data directories in place: runs one after another then do not make their
    /// inodes among the thousands the last run freed (ext4 passes over those for a minute).
    var keepData = false

    /// The Swift sources under `.build/checkouts` (sorted by path), else generated code-like files.
    static func projectFiles() -> (source: String, files: [(path: String, text: String)]) {
        let root = FileManager.default.currentDirectoryPath + "/.build/checkouts"
        var files: [(String, String)] = []
        if let enumerator = FileManager.default.enumerator(atPath: root) {
            for case let path as String in enumerator where path.hasSuffix(".swift") {
                guard let data = FileManager.default.contents(atPath: root + "/" + path),
                      let text = String(validating: data, as: UTF8.self) else { continue }
                files.append((path, text))
            }
        }
        files.sort { $0.0 < $1.0 }
        if files.count >= 100 { return ("the Swift sources under .build/checkouts", files) }
        // Generated: functions of the code-shaped histories' kind, 2-30 KB a file.
        var random = SeededRandom(seed: 0xf11e5)
        let (trace, _) = CodeTraces.make(.refactoring, scale: 1)
        let text = Array(trace.endContent.unicodeScalars)
        files = (0..<2_000).map { i in
            let start = random.below(text.count / 2), length = 2_000 + random.below(28_000)
            return ("generated/file\(i).swift", String(String.UnicodeScalarView(text[start..<min(text.count, start + length)])))
        }
        return ("generated code-like files", files)
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    func run() throws -> Result {
        var result = Result()
        // Data directories are removed at the end: ext4 passes over inodes freed in the last
        // seconds when it makes new ones, which would slow each measurement after a removal.
        var directories: [String] = []
        defer { if !keepData { for path in directories { try? FileManager.default.removeItem(atPath: path) } } }
        let (source, files) = Self.projectFiles()
        result.source = "\(files.count) files, \(source)"
        if parts.contains("fresh") {
            result.fresh.append(try fresh("prose (3 MB document)", [DocumentBenchmark.makeText()], &directories))
            let code = files.prefix(2_000).map(\.text)
            result.fresh.append(try fresh("code (\(code.count) files, one document each)", code, &directories))
            if let largest = files.max(by: { $0.text.utf8.count < $1.text.utf8.count }) {
                result.fresh.append(try fresh("code (the largest file, \(largest.text.utf8.count / 1024) KB)", [largest.text], &directories))
            }
        }
        for n in sizes where parts.contains("durable") {
            result.projects.append(try open(files, count: n, durable: true, readBytes: 65_536, &directories))
        }
        if sizes.contains(2_000) {
            if parts.contains("one-read") {
                result.projects.append(try open(files, count: 2_000, durable: true, readBytes: Int.max, &directories))
            }
            if parts.contains("memory") {
                result.projects.append(try open(files, count: 2_000, durable: false, readBytes: 65_536, &directories))
            }
        }
        return result
    }

    /// Documents made from `texts` (one each), kept: heap per character; then their files on disk
    /// as the store writes them at creation (the log's first record), and as a snapshot.
    private func fresh(_ name: String, _ texts: [String], _ directories: inout [String]) throws -> Fresh {
        var f = Fresh(name: name)
        for text in texts {
            f.characters += text.unicodeScalars.count
            f.utf8Bytes += text.utf8.count
        }
        let before = Measure.heapInUse()
        let documents = texts.map { ReplicatingText($0, replica: ReplicaID(1)) }
        f.heapBytes = Measure.heapInUse() - before
        var leaves = 0, runs = 0, runBytes = 0, contentBytes = 0, idIndexBytes = 0, leafBytes = 0
        for d in documents {
            let s = d.scalars._storageStatistics
            leaves += s.leaves
            runs += s.runs
            runBytes += s.runBytes
            contentBytes += s.contentBytes
            idIndexBytes += s.idIndexBytes
            leafBytes += s.leafObjectBytes
        }
        let c = Double(max(f.characters, 1))
        f.statistics = "\(leaves) leaves, \(runs) runs; per char: runs \(String(format: "%.2f", Double(runBytes) / c)), content \(String(format: "%.2f", Double(contentBytes) / c)), ID index \(String(format: "%.2f", Double(idIndexBytes) / c)), leaf records and array headers \(String(format: "%.2f", Double(leafBytes) / c))" 
        let path = StorageBenchmark.temporaryDirectory()
        directories.append(path)
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        do {
            let store = try DocumentStore(path: path, logger: logger)
            for (i, d) in documents.enumerated() { store.create(uri: "f\(i)", id: UInt64(i + 1), initial: d.operations()) }
            store.commit()
            store.finishOwnFiles()
            f.logBytes = StorageBenchmark.diskBytes(path + "/documents")
        }
        f.snapshotBytes = documents.reduce(0) { $0 + $1.encodedState().count }
        return f
    }

    /// The first `count` files (cycled, under new names, when there are fewer) opened by one
    /// editor through `document/open`, fed to the daemon in reads of `readBytes` (as a pipe
    /// delivers them; NIO reads at most 64 KiB); then the daemon dropped and a new one started
    /// on the same data directory.
    private func open(_ files: [(path: String, text: String)], count: Int, durable: Bool, readBytes: Int,
                      _ directories: inout [String]) throws -> Project {
        var p = Project(mode: durable ? (readBytes == Int.max ? "durable, one read" : "durable, 64 KiB reads") : "memory only")
        p.files = count
        var frames: [UInt8] = []
        for i in 0..<count {
            let file = files[i % files.count]
            let uri = i < files.count ? file.path : "copy\(i / files.count)/\(file.path)"
            p.characters += file.text.unicodeScalars.count
            p.utf8Bytes += file.text.utf8.count
            frames += DaemonBenchmark.frame(JSONSerializer().string(["jsonrpc": "2.0", "id": .integer(Int64(i + 2)), "method": "document/open",
                                                                     "params": ["uri": .string(uri), "text": .string(file.text)]]))
        }
        let path = StorageBenchmark.temporaryDirectory()
        directories.append(path)
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        var next: UInt64 = 0
        do {
            let store = durable ? try DocumentStore(path: path + "/data", logger: logger) : nil
            let heapBefore = Measure.heapInUse()
            let daemon = Daemon(logger: logger, replicaSource: { next += 1; return ReplicaID(next) }, store: store)
            var replies = 0
            let editor = EditorConnection(daemon: daemon) { _ in replies += 1 }
            editor.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
            let start = DispatchTime.now().uptimeNanoseconds
            var offset = 0
            while offset < frames.count {
                let end = frames.count - offset <= readBytes ? frames.count : offset + readBytes
                editor.receive(frames[offset..<end])
                p.reads += 1
                offset = end
            }
            p.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard replies == count + 1 else { throw StorageBenchmarkError("\(replies) replies for \(count + 1) requests") }
            p.heapBytes = Measure.heapInUse() - heapBefore
            p.residentBytes = Self.residentBytes()
            store?.finishOwnFiles()
            p.ownFilesSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            p.diskBytes = StorageBenchmark.diskBytes(path + "/data")
            frames = []
            withExtendedLifetime(daemon) {}
            withExtendedLifetime(editor) {}
        }
        guard durable else { return p }
        // A restart: a new store and daemon on the same directory load every document.
        let heapBefore = Measure.heapInUse()
        let start = DispatchTime.now().uptimeNanoseconds
        let store = try DocumentStore(path: path + "/data", logger: logger)
        let daemon = Daemon(logger: logger, replicaSource: { next += 1; return ReplicaID(next) }, store: store)
        p.restartSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        p.restartHeapBytes = Measure.heapInUse() - heapBefore
        p.restartedDocuments = daemon.documentCount
        return p
    }
}
