import Foundation
import JSON
import Logging
import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// Peer figures: keystroke-to-other-editor latency across two real daemons on loopback TCP,
/// catch-up after 100,000 missed edits, and the initial sync of a 3 MB document.
struct PeerBenchmark {
    let binary: String

    struct Latency {
        var typingP50 = 0.0, typingP99 = 0.0, burstP50 = 0.0, burstP99 = 0.0
        var keystrokes = 0
    }

    struct Result {
        var latency = Latency()
        var catchUpEdits = 0
        var catchUpSeconds = 0.0
        var catchUpBytes = 0
        var bulkBytes = 0
        var bulkWireBytes = 0
        var bulkSeconds = 0.0
    }

    func run() throws -> Result {
        var result = Result()
        result.latency = try latency(keystrokes: 1000)
        (result.catchUpEdits, result.catchUpSeconds, result.catchUpBytes) = catchUp(edits: 100_000)
        (result.bulkBytes, result.bulkSeconds, result.bulkWireBytes) = bulkSync()
        return result
    }

    // MARK: Two real daemons

    /// A `quire` process with an editor on its stdio; replies and notifications are parsed by a
    /// reader thread, which timestamps every inserted character it sees arrive.
    final class Endpoint: @unchecked Sendable {
        let process = Process()
        let input = Pipe(), output = Pipe(), errors = Pipe()
        let lock = NSCondition()
        var arrivals: [UInt64] = []          // one timestamp per inserted character received
        var replies = 0
        var log = ""

        init(binary: String, arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(["QUIRE_SECRET": benchSecret]) { _, new in new }
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            DaemonPipeReaders.start(output: output, errors: errors, lock: lock, message: { [self] message, _, now in
                if message["method"] == "document/edit" {
                    for change in message["params"]?["changes"]?.arrayValue ?? [] {
                        let n = change["text"]?.stringValue?.unicodeScalars.count ?? 0
                        arrivals += Array(repeating: now, count: n)
                    }
                } else if message["id"] != nil {
                    replies += 1
                }
            }, log: { [self] text in log += text })
        }

        func send(_ text: String) { input.fileHandleForWriting.write(Data(DaemonBenchmark.frame(text))) }

        func wait(timeout: Double = 10, until condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while !condition() { if !lock.wait(until: deadline) { return condition() } }
            return true
        }

        func stop() {
            send(#"{"jsonrpc":"2.0","id":999999,"method":"shutdown"}"#)
            send(#"{"jsonrpc":"2.0","method":"exit"}"#)
            process.waitUntilExit()
        }
    }

    /// Keystroke latency between two daemons on a direct loopback TCP link.
    func latency(keystrokes: Int) throws -> Latency {
        let a = try Endpoint(binary: binary, arguments: ["--listen", "127.0.0.1:0", "--user-name", "a"])
        guard a.wait(until: { a.log.contains("listening for peers on") }),
              let line = a.log.split(separator: "\n").first(where: { $0.contains("listening for peers on") }),
              let port = line.split(separator: ":").last.map(String.init) else { throw BenchError("daemon a did not listen") }
        let b = try Endpoint(binary: binary, arguments: ["--connect", "127.0.0.1:\(port)", "--user-name", "b"])
        return try Self.latency(from: a, to: b, keystrokes: keystrokes)
    }

    /// Keystroke latency from `a`'s editor to `b`'s, over whatever link joins the two daemons;
    /// stops both.
    static func latency(from a: Endpoint, to b: Endpoint, keystrokes: Int) throws -> Latency {
        for e in [a, b] { e.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#) }
        a.send(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#)
        _ = a.wait { a.replies >= 2 }
        // Let the link come up and the (empty) document reach b, then open it there.
        Thread.sleep(forTimeInterval: 0.5)
        b.send(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#)
        _ = b.wait { b.replies >= 2 }
        var id = 10
        func keystroke(_ column: Int) -> String {
            id += 1
            return "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"document/edit\",\"params\":{\"uri\":\"doc\",\"revision\":0,\"changes\":[{\"range\":{\"start\":{\"line\":0,\"character\":\(column)},\"end\":{\"line\":0,\"character\":\(column)}},\"text\":\"a\"}]}}"
        }
        // Typing: one keystroke at a time, each waited for on the other side.
        var typing: [Double] = []
        for i in 0..<keystrokes {
            let sent = DispatchTime.now().uptimeNanoseconds
            a.send(keystroke(i))
            guard b.wait(until: { b.arrivals.count > i }) else { throw BenchError("keystroke \(i) never arrived") }
            b.lock.lock(); typing.append(Double(b.arrivals[i] - sent) / 1e6); b.lock.unlock()
            Thread.sleep(forTimeInterval: 0.002)
        }
        // Burst: all keystrokes written at once.
        var sentAt: [UInt64] = []
        let base = keystrokes
        for i in 0..<keystrokes {
            sentAt.append(DispatchTime.now().uptimeNanoseconds)
            a.send(keystroke(base + i))
        }
        guard b.wait(timeout: 30, until: { b.arrivals.count >= 2 * keystrokes }) else { throw BenchError("burst did not arrive") }
        b.lock.lock()
        let burst = (0..<keystrokes).map { Double(b.arrivals[base + $0] - sentAt[$0]) / 1e6 }
        b.lock.unlock()
        a.stop()
        b.stop()
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        return Latency(typingP50: percentile(typing, 0.5), typingP99: percentile(typing, 0.99),
                       burstP50: percentile(burst, 0.5), burstP99: percentile(burst, 0.99), keystrokes: keystrokes)
    }

    // MARK: In process

    static func daemon(_ base: UInt64) -> Daemon {
        var next = base
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        return Daemon(configuration: Daemon.Configuration(peerSecret: try? PeerSecret.material(from: benchSecret)), logger: logger,
                      replicaSource: { next += 1; return ReplicaID(next) })
    }

    /// Two daemons joined by in-memory queues; returns a function that carries bytes until quiet.
    static func link(_ a: Daemon, _ b: Daemon) throws -> (pump: () -> Void, bytes: () -> Int) {
        final class Queues { var ab: [[UInt8]] = []; var ba: [[UInt8]] = []; var bytes = 0 }
        let q = Queues()
        let la = try a.makePeerLink(write: { q.ab.append($0); q.bytes += $0.count }, close: {}, incoming: false)
        let lb = try b.makePeerLink(write: { q.ba.append($0); q.bytes += $0.count }, close: {})
        la.start()
        lb.start()
        let pump = {
            while !q.ab.isEmpty || !q.ba.isEmpty {
                if !q.ab.isEmpty { lb.receive(q.ab.removeFirst()) }
                if !q.ba.isEmpty { la.receive(q.ba.removeFirst()) }
            }
        }
        return (pump, { q.bytes })
    }

    private func catchUp(edits: Int) -> (Int, Double, Int) {
        let a = Self.daemon(100), b = Self.daemon(200)
        let typist = EditorConnection(daemon: a) { _ in }
        typist.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
        typist.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":"start\n"}}"#))
        guard let first = try? Self.link(a, b) else { return (0, 0, 0) }
        first.pump()
        // b goes away; a's editor types 100,000 characters.
        let frames = DaemonBenchmark.typing(edits, firstLine: 1, requestIDsFrom: nil).flatMap { $0 }
        for link in a.linksForBenchmark { link.close("b went offline") }
        typist.receive(frames)
        let start = DispatchTime.now().uptimeNanoseconds
        guard let second = try? Self.link(a, b) else { return (0, 0, 0) }
        second.pump()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return (edits, seconds, second.bytes())
    }

    private func bulkSync() -> (Int, Double, Int) {
        let a = Self.daemon(100), b = Self.daemon(200)
        let text = DocumentBenchmark.makeText()
        let editor = EditorConnection(daemon: a) { _ in }
        editor.receive(DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
        editor.receive(DaemonBenchmark.frame(JSONSerializer().string(["jsonrpc": "2.0", "id": 2, "method": "document/open",
                                                                        "params": ["uri": "big", "text": .string(text)]])))
        let start = DispatchTime.now().uptimeNanoseconds
        guard let link = try? Self.link(a, b) else { return (0, 0, 0) }
        link.pump()
        return (text.utf8.count, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, link.bytes())
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The secret the benchmark's daemons share, made like every secret (`quire secret`).
private let benchSecret = PeerSecret.generate()
