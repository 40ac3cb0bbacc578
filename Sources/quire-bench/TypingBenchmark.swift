import EditingTraces
import Foundation
import JSON
import QuireProject
import QuireProtocol

/// What a keystroke costs in a shared project, and whether it grows with the project: two real
/// `quire` processes (default durable store, `--durability sync`, temporary data directories), an
/// editor on each one's stdio. The host shares a folder of N source files (`project/share`), the
/// joiner joins it over loopback TCP (`project/join`), and the host's editor opens all N files
/// (`document/open` with `file`). The joiner's editor opens only the file typed into; then, in a
/// second pass, all N files too. The host's editor types code-like text (identifiers, `f(x)`,
/// `<A17>`, line breaks, typos taken back with a backspace) into one file, one keystroke at a
/// time: a `document/edit` request, its reply, and the partner's editor's `document/edit`
/// before the next keystroke (closed loop: no keystroke waits behind another).
///
/// Printed per size and pass: the editor's request-to-reply latency and the time until the
/// partner's editor has the keystroke (median, p99), each daemon's CPU per keystroke (user and
/// system, `/proc/<pid>/stat`), each daemon's CPU per second while idle with everything open
/// (its timers: heartbeats, project passes, commits), and resident memory.
struct TypingBenchmark {
    let binary: String
    let sizes: [Int]
    let keystrokes: Int
    /// Seconds each daemon is watched while idle, before each pass.
    var idleSeconds = 4.0

    /// One typing pass at one size.
    struct Pass {
        /// Whether the joiner's editor had every file open too (else only the one typed into).
        var joinerOpensAll = false
        var reply: [Double] = []
        var partner: [Double] = []
        var hostCPU = 0.0
        var joinerCPU = 0.0
        /// CPU seconds per second of each daemon, idle before the pass, with the files open.
        var hostIdleCPU = 0.0
        var joinerIdleCPU = 0.0
        var hostResident = 0
        var joinerResident = 0
    }

    struct Run {
        var files = 0
        var bytes = 0
        var typedFile = ""
        var typedFileCharacters = 0
        var hostOpenSeconds = 0.0
        var passes: [Pass] = []
    }

    func run() throws -> (source: String, runs: [Run]) {
        let (source, files) = ProjectBenchmark.projectFiles()
        var runs: [Run] = []
        var directories: [String] = []
        defer { for path in directories { try? FileManager.default.removeItem(atPath: path) } }
        for n in sizes { runs.append(try type(files, count: n, &directories)) }
        return ("\(files.count) files, \(source)", runs)
    }

    private func type(_ files: [(path: String, text: String)], count: Int, _ directories: inout [String]) throws -> Run {
        var run = Run()
        run.files = count
        let base = StorageBenchmark.temporaryDirectory()
        directories.append(base)
        let root = base + "/src", joined = base + "/joined"
        var tree: [(path: String, text: String)] = []
        for i in 0..<count {
            let file = files[i % files.count]
            let path = i < files.count ? file.path : "copy\(i / files.count)/\(file.path)"
            let url = URL(fileURLWithPath: root + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.text.utf8).write(to: url)
            tree.append((path, file.text))
            run.bytes += file.text.utf8.count
        }
        // Typed into: the first file of 2,000 to 20,000 characters, in the middle of the tree.
        let typed = tree.indices.dropFirst(count / 2).first { (2_000...20_000).contains(tree[$0].text.unicodeScalars.count) } ?? count / 2
        run.typedFile = tree[typed].path
        run.typedFileCharacters = tree[typed].text.unicodeScalars.count

        let host = try Editor(binary: binary, dataDirectory: base + "/host-data")
        defer { host.stop() }
        let joiner = try Editor(binary: binary, dataDirectory: base + "/joiner-data")
        defer { joiner.stop() }
        for editor in [host, joiner] {
            guard editor.request("initialize", #"{"user":{"name":"bench"}}"#)?["result"] != nil else {
                throw BenchError("a daemon did not initialize: \(editor.log.suffix(2000))")
            }
        }
        guard let shared = host.request("project/share", "{\"root\":\(Self.quoted(root)),\"listen\":[\"127.0.0.1:0\"]}", timeout: 600),
              let text = shared["result"]?["line"]?.stringValue,
              let port = shared["result"]?["addresses"]?.arrayValue?.compactMap({ $0.stringValue }).first(where: { $0.hasPrefix("127.0.0.1:") })
                .flatMap({ $0.split(separator: ":").last }).flatMap({ UInt16($0) }) else {
            throw BenchError("project/share failed: \(host.log.suffix(2000))")
        }
        let parsed = try JoinLine(parsing: text)
        let line = try JoinLine(name: parsed.name, addresses: [PeerAddress(host: "127.0.0.1", port: port)],
                                secret: parsed.secret, fingerprint: parsed.fingerprint, projectKey: parsed.projectKey).encoded
        guard joiner.request("project/join", "{\"line\":\(Self.quoted(line)),\"directory\":\(Self.quoted(joined))}", timeout: 60)?["result"] != nil else {
            throw BenchError("project/join failed: \(joiner.log.suffix(2000))")
        }
        let sharedFiles = Int(shared["result"]?["files"]?.integerValue ?? Int64(count))
        guard joiner.waitForProgress(files: sharedFiles, timeout: 900) else {
            throw BenchError("the joiner did not write the \(count) files within 900 s: \(joiner.log.suffix(2000))")
        }

        // The host's editor opens every file, all sent at once (as a client restoring a session).
        let openStart = DispatchTime.now().uptimeNanoseconds
        let hostOpens = try host.openAll(tree.map { (root + "/" + $0.path, $0.text) }, timeout: 900)
        run.hostOpenSeconds = Double(DispatchTime.now().uptimeNanoseconds - openStart) / 1e9
        let typedOpen = hostOpens[typed]
        guard let joinerTyped = try joiner.openAll([(joined + "/" + tree[typed].path, tree[typed].text)], timeout: 60).first,
              joinerTyped.uri == typedOpen.uri else {
            throw BenchError("the joiner's editor opened another document than the host's for \(tree[typed].path)")
        }

        var typist = Typist(startLine: min(40, tree[typed].text.split(separator: "\n", omittingEmptySubsequences: false).count - 1))
        for joinerOpensAll in [false, true] {
            if joinerOpensAll {
                let rest = tree.indices.filter { $0 != typed }.map { (joined + "/" + tree[$0].path, tree[$0].text) }
                _ = try joiner.openAll(rest, timeout: 900)
            }
            var pass = Pass(joinerOpensAll: joinerOpensAll)
            // Idle: whatever the opens started settles, then each daemon's timers alone.
            Thread.sleep(forTimeInterval: 2)
            let idleBefore = (host.cpuTimes(), joiner.cpuTimes())
            let idleStart = DispatchTime.now().uptimeNanoseconds
            Thread.sleep(forTimeInterval: idleSeconds)
            let idleElapsed = Double(DispatchTime.now().uptimeNanoseconds - idleStart) / 1e9
            pass.hostIdleCPU = host.cpuSeconds(since: idleBefore.0) / idleElapsed
            pass.joinerIdleCPU = joiner.cpuSeconds(since: idleBefore.1) / idleElapsed

            let cpuBefore = (host.cpuTimes(), joiner.cpuTimes())
            var seen = joiner.daemonEdits(of: typedOpen.uri)
            for _ in 0..<keystrokes {
                let (change, cursor) = typist.next()
                let params = "{\"uri\":\(Self.quoted(typedOpen.uri)),\"epoch\":\(typedOpen.epoch),\"revision\":0,\"changes\":[\(change)],\"cursor\":\(cursor),\"editId\":\"k\(typist.count)\"}"
                let sent = DispatchTime.now().uptimeNanoseconds
                guard let reply = host.request("document/edit", params, timeout: 60) else {
                    throw BenchError("no reply to keystroke \(typist.count): \(host.log.suffix(2000))")
                }
                guard reply.message["result"] != nil else {
                    throw BenchError("keystroke \(typist.count) refused: \(JSONSerializer().string(reply.message))")
                }
                pass.reply.append(Double(reply.at - sent) / 1e9)
                guard let arrived = joiner.waitForDaemonEdit(of: typedOpen.uri, after: seen, timeout: 60) else {
                    throw BenchError("the partner's editor did not get keystroke \(typist.count) within 60 s: \(joiner.log.suffix(2000))")
                }
                seen += 1
                pass.partner.append(Double(arrived - sent) / 1e9)
                guard host.daemonEdits(of: typedOpen.uri) == 0 else {
                    throw BenchError("the host's editor got a daemon edit of the typed file: the benchmark types as if it gets none")
                }
            }
            pass.hostCPU = host.cpuSeconds(since: cpuBefore.0) / Double(keystrokes)
            pass.joinerCPU = joiner.cpuSeconds(since: cpuBefore.1) / Double(keystrokes)
            pass.hostResident = host.resident()
            pass.joinerResident = joiner.resident()
            run.passes.append(pass)
        }
        // What was typed is what both daemons hold.
        let expected = typist.apply(to: tree[typed].text)
        for (name, editor) in [("host", host), ("joiner", joiner)] {
            guard let reply = editor.request("document/text", "{\"uri\":\(Self.quoted(typedOpen.uri))}"),
                  let text = reply.message["result"]?["text"]?.stringValue else {
                throw BenchError("document/text failed on the \(name)")
            }
            guard name == "joiner" || text == expected else { throw BenchError("the host's text is not what was typed") }
            guard name == "host" || text == expected else { throw BenchError("the joiner's editor was not sent what was typed") }
        }
        return run
    }

    static func quoted(_ string: String) -> String { JSONSerializer().string(.string(string)) }

    /// Code-like keystrokes at a moving cursor, from line `startLine` of the file: lines such as
    /// `    let v17 = f(x) + g(<A17>, y)` typed one character at a time, a line break after each,
    /// and now and then a wrong character taken back with a backspace. Deterministic.
    struct Typist {
        private var random = SeededRandom(seed: 0x7e57)
        private(set) var count = 0
        private var line: Int
        private var column = 0
        private var current: [Unicode.Scalar] = []
        private var queued: [Unicode.Scalar] = []
        private var typoPending = false
        /// The lines typed so far, in order (the last one unfinished), inserted at `startLine`.
        private var typedLines: [[Unicode.Scalar]] = [[]]
        let startLine: Int

        init(startLine: Int) {
            self.startLine = max(0, startLine)
            line = self.startLine
        }

        private static let shapes = [
            "let v%d = f(x) + g(<A%d>, y)", "if x%d > 0 { return h(x, %d) }", "// <A%d> todo: fix(x%d)",
            "for i in 0..<%d { a[i] = b(i) }", "call(<A%d>, [%d, x])",
        ]

        /// The next keystroke: a change (`document/edit` params' element) and the cursor after it.
        mutating func next() -> (change: String, cursor: String) {
            count += 1
            if typoPending {
                typoPending = false
                column -= 1
                current.removeLast()
                typedLines[typedLines.count - 1] = current
                return (Self.change(line, column, line, column + 1, ""), Self.position(line, column))
            }
            if queued.isEmpty {
                let n = random.below(100)
                let shape = Self.shapes[random.below(Self.shapes.count)].replacingOccurrences(of: "%d", with: "\(n)")
                queued = Array(("    " + shape + "\n").unicodeScalars)
            }
            if queued.first != "\n", random.below(17) == 0 {
                // A wrong letter, taken back by the next keystroke.
                typoPending = true
                let wrong = Unicode.Scalar(UInt8(97 + random.below(26)))
                current.append(wrong)
                typedLines[typedLines.count - 1] = current
                column += 1
                return (Self.change(line, column - 1, line, column - 1, String(wrong)), Self.position(line, column))
            }
            let scalar = queued.removeFirst()
            if scalar == "\n" {
                let change = Self.change(line, column, line, column, "\n")
                line += 1
                column = 0
                current = []
                typedLines.append([])
                return (change, Self.position(line, column))
            }
            current.append(scalar)
            typedLines[typedLines.count - 1] = current
            column += 1
            return (Self.change(line, column - 1, line, column - 1, String(scalar)), Self.position(line, column))
        }

        /// `text` with what was typed so far at the start of line `startLine` (an unfinished
        /// last line runs into that line's text).
        func apply(to text: String) -> String {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let typed = typedLines.map { String(String.UnicodeScalarView($0)) }
            let at = min(startLine, lines.count - 1)
            lines[at] = typed.last! + lines[at]
            lines.insert(contentsOf: typed.dropLast(), at: at)
            return lines.joined(separator: "\n")
        }

        static func position(_ line: Int, _ character: Int) -> String { "{\"line\":\(line),\"character\":\(character)}" }
        static func change(_ l0: Int, _ c0: Int, _ l1: Int, _ c1: Int, _ text: String) -> String {
            "{\"range\":{\"start\":\(position(l0, c0)),\"end\":\(position(l1, c1))},\"text\":\(quoted(text))}"
        }
    }

    /// A `quire` process with an editor on its stdio: requests wait for their reply; replies and
    /// the daemon's `document/edit` notifications are stamped when their frame is read.
    final class Editor: @unchecked Sendable {
        struct Reply {
            let message: JSONValue
            let at: UInt64
            subscript(key: String) -> JSONValue? { message[key] }
        }

        struct Opened {
            let uri: String
            let epoch: Int64
        }

        let process = Process()
        let input = Pipe(), output = Pipe(), errors = Pipe()
        let lock = NSCondition()
        private var replies: [Int64: Reply] = [:]
        private var edits: [String: [UInt64]] = [:]
        private var progressWritten = 0
        private var progressFiles = 0
        private(set) var log = ""
        private var nextID: Int64 = 1

        init(binary: String, dataDirectory: String) throws {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--data-dir", dataDirectory, "--log-level", "warning"]
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            DaemonPipeReaders.start(output: output, errors: errors, lock: lock, message: { [self] message, _, at in
                if message["method"] == nil, let id = message["id"]?.integerValue {
                    replies[id] = Reply(message: message, at: at)
                } else if message["method"] == "document/edit", let uri = message["params"]?["uri"]?.stringValue {
                    edits[uri, default: []].append(at)
                } else if message["method"] == "project/progress", let p = message["params"],
                          let files = p["files"]?.integerValue, let written = p["written"]?.integerValue {
                    progressFiles = Int(files)
                    progressWritten = Int(written)
                }
            }, log: { [self] text in log += text })
        }

        private func takeID() -> Int64 {
            lock.lock(); defer { lock.unlock() }
            nextID += 1
            return nextID - 1
        }

        private func frame(_ id: Int64?, _ method: String, _ params: String) -> [UInt8] {
            DaemonBenchmark.frame("{\"jsonrpc\":\"2.0\",\(id.map { "\"id\":\($0)," } ?? "")\"method\":\"\(method)\",\"params\":\(params)}")
        }

        private func wait(for id: Int64, timeout: Double) -> Reply? {
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while replies[id] == nil { if !lock.wait(until: deadline) { break } }
            return replies.removeValue(forKey: id)
        }

        /// Sends a request and waits for its reply.
        func request(_ method: String, _ params: String, timeout: Double = 30) -> Reply? {
            let id = takeID()
            input.fileHandleForWriting.write(Data(frame(id, method, params)))
            return wait(for: id, timeout: timeout)
        }

        /// Opens every file (`document/open` with `file` and its text), all written at once;
        /// throws unless each is opened with no change to make.
        func openAll(_ files: [(path: String, text: String)], timeout: Double) throws -> [Opened] {
            let first = takeID()
            for _ in 1..<max(1, files.count) { _ = takeID() }
            var bytes: [UInt8] = []
            for (i, file) in files.enumerated() {
                bytes += frame(first + Int64(i), "document/open", "{\"file\":\(quoted(file.path)),\"text\":\(quoted(file.text))}")
            }
            let writer = input.fileHandleForWriting
            let payload = Data(bytes)
            Thread { writer.write(payload) }.start()
            return try files.indices.map { i in
                guard let reply = wait(for: first + Int64(i), timeout: timeout) else {
                    throw BenchError("no reply to the open of \(files[i].path): \(log.suffix(2000))")
                }
                guard let result = reply.message["result"], let uri = result["uri"]?.stringValue, let epoch = result["epoch"]?.integerValue,
                      result["changes"]?.arrayValue?.isEmpty == true else {
                    throw BenchError("the open of \(files[i].path) failed or has changes: \(JSONSerializer().string(reply.message).prefix(500))")
                }
                return Opened(uri: uri, epoch: epoch)
            }
        }

        /// Waits until a joined project's `project/progress` says `files` files are written.
        func waitForProgress(files: Int, timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while progressFiles < files || progressWritten < progressFiles { if !lock.wait(until: deadline) { return false } }
            return true
        }

        /// Daemon edits of `uri` the editor got so far.
        func daemonEdits(of uri: String) -> Int {
            lock.lock(); defer { lock.unlock() }
            return edits[uri]?.count ?? 0
        }

        /// When the daemon edit of `uri` after the first `seen` arrived, waiting for it.
        func waitForDaemonEdit(of uri: String, after seen: Int, timeout: Double) -> UInt64? {
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while (edits[uri]?.count ?? 0) <= seen { if !lock.wait(until: deadline) { return nil } }
            return edits[uri]?[seen]
        }

        /// CPU time of each of the process's threads, in nanoseconds (the first field of its
        /// `/proc/<pid>/task/<tid>/schedstat`, time on a CPU), by thread ID.
        func cpuTimes() -> [String: Int] {
            let pid = process.processIdentifier
            var times: [String: Int] = [:]
            for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
                guard let line = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                      let first = line.split(separator: " ").first, let value = Int(first) else { continue }
                times[task] = value
            }
            return times
        }

        /// CPU seconds the process's threads spent since `before` (`cpuTimes()`), in nanoseconds'
        /// precision (`/proc/<pid>/stat` counts 10 ms ticks). A thread that ended in between (a
        /// commit's sync threads) is not counted: they wait on the disk, and use little CPU.
        func cpuSeconds(since before: [String: Int]) -> Double {
            var nanoseconds = 0
            for (task, now) in cpuTimes() { nanoseconds += now - (before[task] ?? 0) }
            return Double(max(0, nanoseconds)) / 1e9
        }

        /// VmRSS, in bytes.
        func resident() -> Int {
            guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }

        func stop() {
            _ = request("shutdown", "null", timeout: 10)
            input.fileHandleForWriting.write(Data(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","method":"exit"}"#)))
            process.waitUntilExit()
        }
    }
}

extension QuireBench {
    func runTypingBenchmark() throws {
        let sizes = typingSizes.split(separator: ",").compactMap { Int($0) }
        var benchmark = TypingBenchmark(binary: try quireBinary(), sizes: sizes, keystrokes: typingKeystrokes)
        benchmark.idleSeconds = typingIdleSeconds
        let r = try benchmark.run()
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
        }
        if json {
            for run in r.runs {
                for pass in run.passes {
                    print(JSONSerializer(sortedKeys: true).string([
                        "typing": .integer(Int64(run.files)), "bytes": .integer(Int64(run.bytes)), "joinerOpensAll": .bool(pass.joinerOpensAll),
                        "keystrokes": .integer(Int64(pass.reply.count)),
                        "replyMedianSeconds": .double(percentile(pass.reply, 0.5)), "replyP99Seconds": .double(percentile(pass.reply, 0.99)),
                        "partnerMedianSeconds": .double(percentile(pass.partner, 0.5)), "partnerP99Seconds": .double(percentile(pass.partner, 0.99)),
                        "hostCPUSecondsPerKeystroke": .double(pass.hostCPU), "joinerCPUSecondsPerKeystroke": .double(pass.joinerCPU),
                        "hostIdleCPUPerSecond": .double(pass.hostIdleCPU), "joinerIdleCPUPerSecond": .double(pass.joinerIdleCPU),
                        "hostResidentBytes": .integer(Int64(pass.hostResident)), "joinerResidentBytes": .integer(Int64(pass.joinerResident)),
                    ]))
                }
            }
            return
        }
        print("typing in a shared project: two real daemons (durable store, --durability sync), loopback TCP; the host's editor has every file open and types \(typingKeystrokes) code-like keystrokes into one, each a document/edit request answered before the next; files from \(r.source)")
        for run in r.runs {
            print("  \(run.files) files, \(fmt(Double(run.bytes) / 1e6)) MB; typing into \(run.typedFile) (\(run.typedFileCharacters) characters); the host's editor opened them all in \(ms(run.hostOpenSeconds).trimmingCharacters(in: .whitespaces))")
            for pass in run.passes {
                func us(_ seconds: Double) -> String { String(format: "%.0f µs", seconds * 1e6) }
                print("""
                    the joiner's editor has \(pass.joinerOpensAll ? "every file" : "the typed file only") open:
                      reply      median \(us(percentile(pass.reply, 0.5))), p99 \(us(percentile(pass.reply, 0.99)))  (the host's editor: request to reply)
                      partner    median \(us(percentile(pass.partner, 0.5))), p99 \(us(percentile(pass.partner, 0.99)))  (request sent to the joiner's editor reading the daemon edit)
                      CPU        host \(us(pass.hostCPU)), joiner \(us(pass.joinerCPU)) per keystroke; idle before: host \(fmt(pass.hostIdleCPU * 1000)) ms/s, joiner \(fmt(pass.joinerIdleCPU * 1000)) ms/s
                      resident   host \(pass.hostResident / 1_048_576) MiB, joiner \(pass.joinerResident / 1_048_576) MiB
                """)
            }
        }
    }
}
