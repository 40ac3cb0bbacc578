import Foundation

/// Single-character edits through the real `quire` binary over stdio: LSP framing, jansson,
/// JSON-RPC, the CRDT and the reply, with the pipes in between. Counts edits per second from
/// the first byte written to the last reply read.
struct StdioBenchmark {
    let binary: String
    let edits: Int

    struct Result {
        var editsPerSecond = 0.0
        var replies = 0
    }

    func run() throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var frames: [UInt8] = []
        frames += DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        frames += DaemonBenchmark.frame(#"{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"doc","text":""}}"#)
        var line = 0, column = 0
        for i in 0..<edits {
            let text = i % 60 == 59 ? "\\n" : "a"
            frames += DaemonBenchmark.frame("{\"jsonrpc\":\"2.0\",\"id\":\(i + 3),\"method\":\"document/edit\",\"params\":{\"uri\":\"doc\",\"revision\":0,\"changes\":[{\"range\":{\"start\":{\"line\":\(line),\"character\":\(column)},\"end\":{\"line\":\(line),\"character\":\(column)}},\"text\":\"\(text)\"}]}}")
            if i % 60 == 59 { line += 1; column = 0 } else { column += 1 }
        }
        let expected = edits + 2
        let start = DispatchTime.now().uptimeNanoseconds
        let writer = input.fileHandleForWriting
        let payload = Data(frames)
        Thread { writer.write(payload) }.start()
        // Count replies by their header lines.
        var replies = 0
        var carry: [UInt8] = []
        let needle = Array("Content-Length".utf8)
        while replies < expected {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            var bytes = carry + [UInt8](data)
            var i = 0
            while i + needle.count <= bytes.count {
                if bytes[i] == needle[0], Array(bytes[i..<(i + needle.count)]) == needle { replies += 1; i += needle.count } else { i += 1 }
            }
            bytes.removeFirst(min(i, bytes.count))
            carry = bytes
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return Result(editsPerSecond: Double(edits) / seconds, replies: replies)
    }
}
