import Foundation
import JSON
import QuireProject
import QuireProtocol

/// Sharing a project (issue 21): two real `quire` processes, each with the durable store in a
/// temporary data directory and an editor on its stdio; the host shares a folder of N source
/// files (`project/share`), the joiner joins it (`project/join`) over loopback TCP through a
/// counting proxy, until every file is on the joiner's disk byte for byte. Measures the share,
/// the join, the bytes each way and each daemon's memory.
struct ShareBenchmark {
    let binary: String
    let sizes: [Int]
    /// Also writes the joined tree by itself after each join (`WriteFloor`), both ways.
    var floor = false

    struct Run {
        var files = 0
        var bytes = 0
        var sharedFiles = 0
        var shareSeconds = 0.0
        var joinSeconds = 0.0
        var progressSeconds: Double?
        /// When the first file, half the files and 90% of them were right on the joiner's disk.
        var milestones: [Double?] = [nil, nil, nil]
        var toHostBytes = 0
        var toJoinerBytes = 0
        var connections = 0
        var host = Memory()
        var joiner = Memory()
        /// `WriteFloor`'s seconds for the same tree, right after the join (with `floor`).
        var floors: [(WriteFloor.Sync, Double)] = []
    }

    /// A process's resident memory (kernel figures from /proc): before anything, and at the end.
    struct Memory {
        var startResident = 0
        var resident = 0
        var peakResident = 0
    }

    func run() throws -> (source: String, runs: [Run]) {
        let (source, files) = ProjectBenchmark.projectFiles()
        var runs: [Run] = []
        // Folders are not removed, not even at the end (`KeptFolders`): ext4 without a journal
        // passes over the inodes freed in the last minutes when it makes new ones, so a run would
        // measure the clean-up of the one before (a join 1-2 s slower).
        var directories: [String] = []
        defer { for path in directories { KeptFolders.keep(path) } }
        for n in sizes {
            var (run, tree) = try share(files, count: n, &directories)
            if floor, let base = directories.last {
                for sync in [WriteFloor.Sync.filesystemPerGroup, .filePerFile] {
                    run.floors.append((sync, try WriteFloor.write(tree, under: base + "/floor-\(sync)-\(n)", sync: sync)))
                }
            }
            runs.append(run)
        }
        return ("\(files.count) files, \(source)", runs)
    }

    /// One share and join of `count` files; the run and the tree the joiner got.
    private func share(_ files: [(path: String, text: String)], count: Int, _ directories: inout [String]) throws -> (Run, [(path: String, data: Data)]) {
        var run = Run()
        run.files = count
        let base = StorageBenchmark.temporaryDirectory()
        directories.append(base)
        let root = base + "/src-\(count)", joined = base + "/joined-\(count)"
        var tree: [(path: String, data: Data)] = []
        for i in 0..<count {
            let file = files[i % files.count]
            let path = i < files.count ? file.path : "copy\(i / files.count)/\(file.path)"
            let data = Data(file.text.utf8)
            let url = URL(fileURLWithPath: root + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
            tree.append((path, data))
            run.bytes += data.count
        }
        let host = try Peer(binary: binary, dataDirectory: base + "/host-data")
        defer { host.stop() }
        let joiner = try Peer(binary: binary, dataDirectory: base + "/joiner-data")
        defer { joiner.stop() }
        for p in [host, joiner] {
            guard p.request("initialize", #"{"user":{"name":"bench"}}"#) != nil else { throw BenchError("a daemon did not initialize: \(p.log)") }
        }
        run.host.startResident = host.memory().resident
        run.joiner.startResident = joiner.memory().resident

        // Share: the scan, a document per file (durable), the listener and the line.
        let shareStart = DispatchTime.now().uptimeNanoseconds
        guard let shared = host.request("project/share", "{\"root\":\(JSONSerializer().string(.string(root))),\"listen\":[\"127.0.0.1:0\"]}", timeout: 300),
              let text = shared["result"]?["line"]?.stringValue, let port = shared["result"]?["addresses"]?.arrayValue?.first?.stringValue
                .flatMap({ $0.split(separator: ":").last }).flatMap({ Int($0) }) else {
            throw BenchError("project/share failed: \(host.lastReply ?? "no reply") \(host.log.suffix(2000))")
        }
        run.shareSeconds = Double(DispatchTime.now().uptimeNanoseconds - shareStart) / 1e9
        run.sharedFiles = Int(shared["result"]?["files"]?.integerValue ?? 0)

        // The joiner dials the proxy, which forwards to the host and counts each way.
        let proxy = try CountingProxy(targetPort: port)
        defer { proxy.stop() }
        let parsed = try JoinLine(parsing: text)
        let line = try JoinLine(name: parsed.name, addresses: [PeerAddress(host: "127.0.0.1", port: UInt16(proxy.port))],
                                secret: parsed.secret, fingerprint: parsed.fingerprint, projectKey: parsed.projectKey).encoded
        let joinStart = DispatchTime.now().uptimeNanoseconds
        guard let reply = joiner.request("project/join", "{\"line\":\(JSONSerializer().string(.string(line))),\"directory\":\(JSONSerializer().string(.string(joined)))}", timeout: 60),
              reply["result"] != nil else {
            throw BenchError("project/join failed: \(joiner.lastReply ?? "no reply") \(joiner.log.suffix(2000))")
        }
        // Complete: every file there with the host's bytes. Every 10 ms, 32 files not yet right,
        // picked at random, are looked at (size, then bytes), and when one of them is, or every
        // 100 ms anyway, every file left is: the poll no longer takes a core from the daemons
        // (2,000 stats each 10 ms), and a milestone is seen within some 10 ms (the pass's first
        // group alone is found by one of 32 picks two times in three), 100 ms at worst. When no
        // file is left, the whole tree is checked again.
        var pending = Array(tree.indices)
        var polls = 0
        let deadline = Date().addingTimeInterval(600)
        while true {
            let now = Double(DispatchTime.now().uptimeNanoseconds - joinStart) / 1e9
            if run.progressSeconds == nil, joiner.progressComplete { run.progressSeconds = now }
            polls += 1
            let picked = pending.count <= 32 ? pending : (0..<32).compactMap { _ in pending.randomElement() }
            if polls % 10 == 0 || picked.contains(where: { Self.matches(tree[$0], under: joined) }) {
                pending.removeAll { Self.matches(tree[$0], under: joined) }
            }
            let done = tree.count - pending.count
            for (i, fraction) in [0.0, 0.5, 0.9].enumerated() where run.milestones[i] == nil && done > Int(fraction * Double(tree.count)) {
                run.milestones[i] = now
            }
            if pending.isEmpty {
                pending = tree.indices.filter { !Self.matches(tree[$0], under: joined) }
                if pending.isEmpty { break }
            }
            guard Date() < deadline else {
                throw BenchError("the joiner's tree was not complete after 600 s: \(pending.count) of \(count) files missing or different, e.g. \(pending.prefix(3).map { tree[$0].path }); \(joiner.log.suffix(2000))")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        run.joinSeconds = Double(DispatchTime.now().uptimeNanoseconds - joinStart) / 1e9
        // No file beyond the host's (a stray file would make the trees differ).
        let extra = (FileManager.default.enumerator(atPath: joined)?.allObjects as? [String] ?? [])
            .filter { path in var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: joined + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue }
            .count - tree.count
        guard extra == 0 else { throw BenchError("the joiner's tree has \(extra) files more than the host's") }
        // What each daemon holds once the join is done (the host may still be sending acks).
        (run.toHostBytes, run.toJoinerBytes, run.connections) = proxy.counts()
        run.host.resident = host.memory().resident
        run.host.peakResident = host.memory().peak
        run.joiner.resident = joiner.memory().resident
        run.joiner.peakResident = joiner.memory().peak
        if ProcessInfo.processInfo.environment["QUIRE_BENCH_LOG_LEVEL"] != nil {
            print("--- host's log\n\(host.log)\n--- joiner's log (join sent at \(joinStart / 1_000_000) ms of uptime)\n\(joiner.log)")
        }
        return (run, tree)
    }

    /// Whether `file` is under `directory` with its bytes.
    private static func matches(_ file: (path: String, data: Data), under directory: String) -> Bool {
        var info = stat()
        guard stat(directory + "/" + file.path, &info) == 0, Int(info.st_size) == file.data.count else { return false }
        return FileManager.default.contents(atPath: directory + "/" + file.path) == file.data
    }

    /// A `quire` process with the durable store in `dataDirectory` and an editor on its stdio.
    final class Peer: @unchecked Sendable {
        let process = Process()
        let input = Pipe(), output = Pipe(), errors = Pipe()
        let lock = NSCondition()
        var replies: [Int64: JSONValue] = [:]
        var lastReply: String?
        var progressComplete = false
        var log = ""
        var nextID: Int64 = 1

        init(binary: String, dataDirectory: String) throws {
            process.executableURL = URL(fileURLWithPath: binary)
            // QUIRE_BENCH_LOG_LEVEL=info (say) shows where a run's time goes; logs are printed
            // after the run.
            let level = ProcessInfo.processInfo.environment["QUIRE_BENCH_LOG_LEVEL"] ?? "warning"
            process.arguments = ["--data-dir", dataDirectory, "--log-level", level]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            DaemonPipeReaders.start(output: output, errors: errors, lock: lock, message: { [self] message, body, _ in
                if message["method"] == nil, message["id"] != nil {
                    if let id = message["id"]?.integerValue { replies[id] = message }
                    lastReply = String(decoding: body.prefix(2000), as: UTF8.self)
                } else if message["method"] == "project/progress", let p = message["params"],
                          let files = p["files"]?.integerValue, let written = p["written"]?.integerValue, written >= files {
                    progressComplete = true
                }
            }, log: { [self] text in log += text })
        }

        /// Sends a request and waits for its reply.
        func request(_ method: String, _ params: String, timeout: Double = 30) -> JSONValue? {
            lock.lock()
            let id = nextID
            nextID += 1
            lock.unlock()
            input.fileHandleForWriting.write(Data(DaemonBenchmark.frame("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\",\"params\":\(params)}")))
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while replies[id] == nil { if !lock.wait(until: deadline) { break } }
            return replies[id]
        }

        /// VmRSS and VmHWM of the process, in bytes.
        func memory() -> (resident: Int, peak: Int) {
            guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else { return (0, 0) }
            func field(_ name: String) -> Int {
                guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
                return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
            }
            return (field("VmRSS"), field("VmHWM"))
        }

        func stop() {
            _ = request("shutdown", "null", timeout: 10)
            input.fileHandleForWriting.write(Data(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","method":"exit"}"#)))
            process.waitUntilExit()
        }
    }
}

/// A loopback TCP proxy that forwards each connection to `127.0.0.1:targetPort` and counts the
/// bytes each way (TCP payload: the links' encrypted frames, not IP or TCP headers).
final class CountingProxy: @unchecked Sendable {
    private(set) var port = 0
    private let listener: Int32
    private let targetPort: Int
    private let lock = NSLock()
    private var toTarget = 0, fromTarget = 0, connections = 0

    init(targetPort: Int) throws {
        self.targetPort = targetPort
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw BenchError("proxy: socket failed") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw BenchError("proxy: cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in accepting() }.start()
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { close(client); close(server); continue }
            var one: Int32 = 1
            for s in [client, server] { setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
            lock.lock(); connections += 1; lock.unlock()
            Thread { [self] in pump(from: client, to: server, toTarget: true) }.start()
            Thread { [self] in pump(from: server, to: client, toTarget: false) }.start()
        }
    }

    private func pump(from: Int32, to: Int32, toTarget direction: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        outer: while true {
            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            var sent = 0
            while sent < n {
                let w = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, n - sent) }
                if w <= 0 { break outer }
                sent += w
            }
            lock.lock()
            if direction { toTarget += n } else { fromTarget += n }
            lock.unlock()
        }
        shutdown(to, Int32(SHUT_WR))
        shutdown(from, Int32(SHUT_RD))
    }

    /// Bytes to the target (the host), from it, and the connections made.
    func counts() -> (Int, Int, Int) {
        lock.lock(); defer { lock.unlock() }
        return (toTarget, fromTarget, connections)
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}

extension QuireBench {
    func runShareBenchmark() throws {
        let sizes = shareSizes.split(separator: ",").compactMap { Int($0) }
        var benchmark = ShareBenchmark(binary: try quireBinary(), sizes: sizes)
        benchmark.floor = shareFloor
        let r = try benchmark.run()
        if json {
            for run in r.runs {
                var object: [String: JSONValue] = [
                    "share": .integer(Int64(run.files)), "bytes": .integer(Int64(run.bytes)), "sharedFiles": .integer(Int64(run.sharedFiles)),
                    "shareSeconds": .double(run.shareSeconds), "joinSeconds": .double(run.joinSeconds),
                    "progressSeconds": run.progressSeconds.map { .double($0) } ?? .null,
                    "toHostBytes": .integer(Int64(run.toHostBytes)), "toJoinerBytes": .integer(Int64(run.toJoinerBytes)),
                    "hostResidentBytes": .integer(Int64(run.host.resident)), "hostPeakResidentBytes": .integer(Int64(run.host.peakResident)),
                    "joinerResidentBytes": .integer(Int64(run.joiner.resident)), "joinerPeakResidentBytes": .integer(Int64(run.joiner.peakResident)),
                ]
                for (sync, seconds) in run.floors { object[sync == .filesystemPerGroup ? "floorSyncfsSeconds" : "floorFsyncSeconds"] = .double(seconds) }
                print(JSONSerializer(sortedKeys: true).string(.object(object)))
            }
            return
        }
        print("sharing a project: two real daemons (durable store, temporary data directories), loopback TCP through a counting proxy; files from \(r.source)")
        for run in r.runs {
            let files = Double(Swift.max(run.files, 1)), mb = Double(run.bytes) / 1e6
            func per(_ value: Double, _ unit: String, scale: Double = 1) -> String {
                "\(fmt(value * scale / files)) \(unit)/file, \(fmt(value * scale / mb)) \(unit)/MB"
            }
            func memory(_ m: ShareBenchmark.Memory) -> String {
                let grown = Double(m.resident - m.startResident)
                return "resident \(m.resident / 1_048_576) MiB (peak \(m.peakResident / 1_048_576) MiB; +\(Int(grown) / 1_048_576) MiB since start: \(fmt(grown / 1024 / files)) KiB/file, \(fmt(grown / 1_048_576 / mb)) MiB/MB)"
            }
            let progress = run.progressSeconds.map { "; the joiner's project/progress said complete after \(ms($0).trimmingCharacters(in: .whitespaces))" } ?? ""
            let steps = zip(["first file", "half", "90%"], run.milestones).map { "\($0) \($1.map { ms($0).trimmingCharacters(in: .whitespaces) } ?? "-")" }.joined(separator: ", ")
            print("""
              \(run.files) files, \(fmt(mb)) MB (\(run.sharedFiles) in the shared tree):
                share    \(ms(run.shareSeconds))  (scan, a durable document per file, listen, line; \(per(run.shareSeconds, "ms", scale: 1000)))
                join     \(ms(run.joinSeconds))  (project/join sent to every file on the joiner's disk, byte-identical; \(per(run.joinSeconds, "ms", scale: 1000)))\(progress)
                         on disk: \(steps)
                wire     to the joiner \(fmt(Double(run.toJoinerBytes) / 1e6)) MB (\(fmt(Double(run.toJoinerBytes) / Double(Swift.max(run.bytes, 1))))x the files), to the host \(fmt(Double(run.toHostBytes) / 1e3)) KB; \(run.connections) connection(s)
                host     \(memory(run.host))
                joiner   \(memory(run.joiner))
            """)
            if !run.floors.isEmpty {
                print("    floor    the same tree written by one process right after, each file synced before its rename: " + run.floors.map { "\(ms($1).trimmingCharacters(in: .whitespaces)) (\($0.rawValue))" }.joined(separator: ", "))
            }
        }
        print("  " + KeptFolders.notice())
    }
}
