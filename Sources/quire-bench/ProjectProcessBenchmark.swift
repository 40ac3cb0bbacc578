import Foundation
import JSON

/// A project opened through `document/open` by an editor on the real `quire` binary's stdio
/// pipes, durable store (`--durability sync`) in a temporary data directory: how the daemon reads
/// the pipe (what NIO delivers per read, when a read ends and its commit runs) is the daemon's
/// own, not the in-process benchmark's 64 KiB model. Time is from the first byte written to the
/// last reply read; the daemon's own counters (`/proc/<pid>/io`, syscalls) are read before it exits.
struct ProjectProcessBenchmark {
    let binary: String
    let count: Int
    let keepData: Bool

    struct Result {
        var files = 0
        var utf8Bytes = 0
        var seconds = 0.0
        var replies = 0
        /// The daemon's `/proc/<pid>/io` write_bytes and its resident memory once every reply came.
        var writtenBytes = 0
        var residentBytes = 0
        /// The daemon's CPU time (user and system, all its threads) from the first open written
        /// to the last reply read: what a loaded machine must find for it.
        var cpuSeconds = 0.0
    }

    /// utime + stime of process `pid` in seconds (`/proc/<pid>/stat`), nil when unreadable.
    static func cpuSeconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command's closing parenthesis, from the state (field 3): utime is field 14.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func run(_ files: [(path: String, text: String)]) throws -> Result {
        var r = Result(files: count)
        let initialize = DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        var frames: [UInt8] = []
        for i in 0..<count {
            let file = files[i % files.count]
            let uri = i < files.count ? file.path : "copy\(i / files.count)/\(file.path)"
            r.utf8Bytes += file.text.utf8.count
            frames += DaemonBenchmark.frame(JSONSerializer().string(["jsonrpc": "2.0", "id": .integer(Int64(i + 2)), "method": "document/open",
                                                                     "params": ["uri": .string(uri), "text": .string(file.text)]]))
        }
        let path = StorageBenchmark.temporaryDirectory()
        defer { if !keepData { try? FileManager.default.removeItem(atPath: path) } }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--data-dir", path + "/data", "--durability", "sync", "--log-level", "error"]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = path + "/xdg"
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // The daemon is up once it answers `initialize`; the clock starts at the first open.
        input.fileHandleForWriting.write(Data(initialize))
        var counter = ReplyCounter()
        while counter.replies < 1 {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw StorageBenchmarkError("the daemon ended before it answered initialize") }
            counter.feed(data)
        }
        let opens = Data(frames)
        frames = []
        let cpuAtStart = Self.cpuSeconds(of: process.processIdentifier)
        let start = DispatchTime.now().uptimeNanoseconds
        let writer = input.fileHandleForWriting
        Thread { writer.write(opens) }.start()
        while counter.replies < count + 1 {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            counter.feed(data)
        }
        r.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if let before = cpuAtStart, let after = Self.cpuSeconds(of: process.processIdentifier) { r.cpuSeconds = after - before }
        r.replies = counter.replies - 1
        guard r.replies == count else { throw StorageBenchmarkError("\(r.replies) replies for \(count) opens") }
        let pid = process.processIdentifier
        if let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8),
           let line = io.split(separator: "\n").first(where: { $0.hasPrefix("write_bytes:") }) {
            r.writtenBytes = Int(line.split(separator: " ").last ?? "") ?? 0
        }
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) {
            r.residentBytes = (Int(line.split(separator: " ").dropLast().last ?? "") ?? 0) * 1024
        }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return r
    }
}

/// Counts LSP replies in a byte stream by their `Content-Length` headers.
struct ReplyCounter {
    private(set) var replies = 0
    private var carry: [UInt8] = []
    private static let needle = Array("Content-Length".utf8)

    mutating func feed(_ data: Data) {
        var bytes = carry + [UInt8](data)
        var i = 0
        let needle = Self.needle
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0], bytes[i..<(i + needle.count)].elementsEqual(needle) { replies += 1; i += needle.count } else { i += 1 }
        }
        bytes.removeFirst(min(i, bytes.count))
        carry = bytes
    }
}
