import Foundation
import JSON
import Logging
import QuireDaemon
import QuireProtocol
import ReplicatingTypes

/// The daemon's own path, in process: LSP framing, jansson, JSON-RPC, the editor view and the
/// CRDT, with a second editor receiving every edit. Also opening a 3 MB document through the
/// protocol and a keystroke in its middle.
struct DaemonBenchmark {
    struct Result {
        var edits = 0
        var requestEditsPerSecond = 0.0
        var notificationEditsPerSecond = 0.0
        var bytesToOtherEditor = 0
        var openLargeSeconds = 0.0
        var keystrokeLargeSeconds = 0.0
    }

    let edits: Int
    let repetitions: Int

    func run() -> Result {
        var result = Result()
        result.edits = edits
        result.requestEditsPerSecond = Double(edits) / Measure.median(repetitions) { _ = typeThrough(asRequests: true) }
        var received = 0
        result.notificationEditsPerSecond = Double(edits) / Measure.median(repetitions) { received = typeThrough(asRequests: false) }
        result.bytesToOtherEditor = received
        let large = DocumentBenchmark.makeText()
        var connection: EditorConnection?
        var daemon: Daemon?
        result.openLargeSeconds = Measure.median(repetitions) {
            let d = Self.makeDaemon()
            let c = EditorConnection(daemon: d) { _ in }
            c.receive(Self.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
            c.receive(Self.frame(JSONSerializer().string(["jsonrpc": "2.0", "id": 2, "method": "document/open",
                                                          "params": ["uri": "war-and-peace", "text": .string(large)]])))
            connection = c
            daemon = d
        }
        let middle = large.utf8.count / 100 / 2
        var n = 0
        result.keystrokeLargeSeconds = Measure.median(max(repetitions, 101)) {
            n += 1
            connection?.receive(Self.frame("{\"jsonrpc\":\"2.0\",\"id\":\(n + 10),\"method\":\"document/edit\",\"params\":{\"uri\":\"war-and-peace\",\"revision\":0,\"changes\":[{\"range\":{\"start\":{\"line\":\(middle),\"character\":7},\"end\":{\"line\":\(middle),\"character\":7}},\"text\":\"x\"}]}}"))
        }
        _ = daemon
        return result
    }

    static func makeDaemon() -> Daemon {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        var next: UInt64 = 0
        return Daemon(logger: logger, replicaSource: { next += 1; return ReplicaID(next) })
    }

    /// `count` single-character `document/edit` frames of "doc", one per edit, as a person types
    /// from the start of line `firstLine`: "a" with a line break every 60 characters. Requests
    /// numbered from `requestIDsFrom`, or notifications.
    static func typing(_ count: Int, firstLine: Int = 0, requestIDsFrom: Int?) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        var line = firstLine, column = 0
        for i in 0..<count {
            let text = i % 60 == 59 ? "\\n" : "a"
            let id = requestIDsFrom.map { "\"id\":\($0 + i)," } ?? ""
            frames.append(frame("{\"jsonrpc\":\"2.0\",\(id)\"method\":\"document/edit\",\"params\":{\"uri\":\"doc\",\"revision\":0,\"changes\":[{\"range\":{\"start\":{\"line\":\(line),\"character\":\(column)},\"end\":{\"line\":\(line),\"character\":\(column)}},\"text\":\"\(text)\"}]}}"))
            if i % 60 == 59 { line += 1; column = 0 } else { column += 1 }
        }
        return frames
    }

    static func frame(_ text: String) -> [UInt8] {
        Array("Content-Length: \(text.utf8.count)\r\n\r\n\(text)".utf8)
    }

    /// One editor types `edits` characters (with a line break every 60) while another editor
    /// receives them; returns the bytes the other editor was sent.
    private func typeThrough(asRequests: Bool) -> Int {
        let daemon = Self.makeDaemon()
        let typist = EditorConnection(daemon: daemon) { _ in }
        var received = 0
        let reader = EditorConnection(daemon: daemon) { received += $0.count }
        for c in [typist, reader] {
            c.receive(Self.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#))
            c.receive(Self.frame(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#))
        }
        let frames = Self.typing(edits, requestIDsFrom: asRequests ? 3 : nil).flatMap { $0 }
        // Feed in read-sized chunks, as a pipe would deliver them.
        var offset = 0
        while offset < frames.count {
            let end = min(offset + 65536, frames.count)
            typist.receive(frames[offset..<end])
            offset = end
        }
        return received
    }
}
