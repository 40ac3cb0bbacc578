import Foundation
import JSON

/// Keystroke latency (editor edit to the other editor's `document/edit`) through a `quire relay`
/// on loopback, next to a direct loopback TCP link: two real daemons that only dial the relay.
struct RelayBenchmark {
    let binary: String

    func run(keystrokes: Int) throws -> (direct: PeerBenchmark.Latency, relayed: PeerBenchmark.Latency) {
        let direct = try PeerBenchmark(binary: binary).latency(keystrokes: keystrokes)
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: binary)
        relay.arguments = ["relay", "--listen", "127.0.0.1:0", "--log-level", "warning"]
        let errors = Pipe()
        relay.standardError = errors
        try relay.run()
        defer { relay.terminate(); relay.waitUntilExit() }
        // The first line names the port.
        var line: [UInt8] = []
        while let byte = try errors.fileHandleForReading.read(upToCount: 1)?.first, byte != 10 { line.append(byte) }
        guard let port = String(decoding: line, as: UTF8.self).split(separator: ":").last.flatMap({ Int($0) }) else {
            throw BenchError("the relay did not say where it listens: \(String(decoding: line, as: UTF8.self))")
        }
        let arguments = ["--relay", "127.0.0.1:\(port)", "--log-level", "info"]
        let a = try PeerBenchmark.Endpoint(binary: binary, arguments: arguments + ["--user-name", "a"])
        let b = try PeerBenchmark.Endpoint(binary: binary, arguments: arguments + ["--user-name", "b"])
        guard a.wait(until: { a.log.contains("established with") }), b.wait(until: { b.log.contains("established with") }) else {
            throw BenchError("the daemons did not pair through the relay")
        }
        let relayed = try PeerBenchmark.latency(from: a, to: b, keystrokes: keystrokes)
        return (direct, relayed)
    }
}

extension QuireBench {
    func runRelayBenchmark(json: Bool) throws {
        let keystrokes = 1000
        let r = try RelayBenchmark(binary: try quireBinary()).run(keystrokes: keystrokes)
        if json {
            for (link, l) in [("loopback-tcp", r.direct), ("loopback-relay", r.relayed)] {
                print(JSONSerializer(sortedKeys: true).string([
                    "peers": .string(link), "keystrokes": .integer(Int64(l.keystrokes)),
                    "typingP50Milliseconds": .double(l.typingP50), "typingP99Milliseconds": .double(l.typingP99),
                    "burstP50Milliseconds": .double(l.burstP50), "burstP99Milliseconds": .double(l.burstP99),
                ]))
            }
        } else {
            func row(_ l: PeerBenchmark.Latency) -> String {
                "typing p50 \(fmt(l.typingP50)) ms, p99 \(fmt(l.typingP99)) ms; burst of \(l.keystrokes) p50 \(fmt(l.burstP50)) ms, p99 \(fmt(l.burstP99)) ms"
            }
            print("""
            relay (two real daemons, an editor on each; keystroke to the other editor's document/edit):
              direct TCP link    \(row(r.direct))
              through a relay    \(row(r.relayed))
            """)
        }
    }
}
