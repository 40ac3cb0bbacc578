import Foundation
import JSON
import Testing
import QuireTestSupport

/// protocol/examples replayed against the real binary, so the spec is executable; and the
/// shared JSON conformance files thrown at the real binary over a pipe.
@Suite(.serialized) struct ExampleTranscriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let examples: [String] = {
        let directory = repository.appendingPathComponent("protocol/examples").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") && !$0.hasSuffix(".replies.jsonl") }.map { String($0.dropLast(6)) }
            .filter { !needsADaemonBefore.contains($0) }.sorted()
    }()

    /// Transcripts that need a data directory a daemon used before (replayed by their own tests).
    static let needsADaemonBefore: Set<String> = ["share-notices"]

    static func lines(_ path: String) -> [String] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// The replies to requests among `messages`, in order. The daemon's own notifications (its
    /// edits) are left out: how many there are and where they fall depends on how the input
    /// was split into reads.
    static func replies(_ messages: [JSONValue]) -> [JSONValue] {
        messages.filter { $0["id"] != nil }
    }

    static func expectedReplies(_ name: String) throws -> [JSONValue] {
        let path = repository.appendingPathComponent("protocol/examples/\(name).replies.jsonl").path
        return replies(try lines(path).map { try JSONParser().parse($0) })
    }

    /// True when `got` equals `expected`, where the string `"*"` in `expected` matches anything.
    static func matches(_ got: JSONValue, _ expected: JSONValue) -> Bool {
        switch (got, expected) {
        case (_, .string("*")): return true
        case (.string(let g), .string(let e)) where e.contains("*"): return globMatches(Substring(g), e.split(separator: "*", omittingEmptySubsequences: false))
        case (.object(let g), .object(let e)):
            return g.keys.sorted() == e.keys.sorted() && e.allSatisfy { key, value in g[key].map { matches($0, value) } ?? false }
        case (.array(let g), .array(let e)):
            return g.count == e.count && zip(g, e).allSatisfy { matches($0, $1) }
        default: return got == expected
        }
    }

    /// Whether `text` is the `parts` with anything (also nothing) between each two.
    static func globMatches(_ text: Substring, _ parts: [Substring]) -> Bool {
        guard let first = parts.first, text.hasPrefix(first) else { return false }
        var rest = text.dropFirst(first.count)
        for (index, part) in parts.enumerated().dropFirst() {
            if index == parts.count - 1 { return rest.hasSuffix(part) && rest.count >= part.count }
            guard let found = rest.range(of: part) else { return false }
            rest = rest[found.upperBound...]
        }
        return rest.isEmpty
    }

    /// `share-notices`: a project shared before (here by a daemon that shared the folder on a port
    /// the system picked, then stopped it) is shared again while another program holds that port:
    /// the reply's `notices` say so and name the port used instead.
    @Test func shareNoticesTranscriptAfterItsPortWasTaken() throws {
        let folder = DaemonProcess.temporaryDirectory("share-notices")
        try Data().write(to: URL(fileURLWithPath: folder + "/.quire-root"))
        try Data("notes\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.md"))
        let environment = ["XDG_DATA_HOME": DaemonProcess.temporaryDirectory("share-notices-data")]
        let before = try DaemonProcess(environment: environment, directory: folder)
        before.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":"ann"}}}"#)
        before.send(#"{"jsonrpc":"2.0","id":2,"method":"project/share","params":{"listen":["127.0.0.1:0"]}}"#)
        let shared = try #require(before.reply(to: 2)?["result"], "\(before.log)")
        let key = try #require(shared["key"]?.stringValue)
        let address = try #require(shared["addresses"]?.arrayValue?.first?.stringValue)
        let port = try #require(address.split(separator: ":").last.flatMap { UInt16($0) })
        before.send(#"{"jsonrpc":"2.0","id":3,"method":"project/stop","params":{"key":"\#(key)"}}"#)
        #expect(before.reply(to: 3)?["result"] != nil)
        before.send(#"{"jsonrpc":"2.0","id":4,"method":"shutdown"}"#)
        before.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(before.waitForExit() == 0)
        // Another program listens on that port now.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var place = sockaddr_in()
        place.sin_family = sa_family_t(AF_INET)
        place.sin_port = port.bigEndian
        place.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &place) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(bound == 0 && listen(holder, 1) == 0, "the port \(port) could be held")

        let daemon = try DaemonProcess(environment: environment, directory: folder)
        let directory = Self.repository.appendingPathComponent("protocol/examples")
        for line in Self.lines(directory.appendingPathComponent("share-notices.jsonl").path) { daemon.send(line) }
        #expect(daemon.waitForExit() == 0)
        let expected = try Self.expectedReplies("share-notices")
        let got = Self.replies(daemon.waitForMessages(Int.max, timeout: 5))
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) {
            #expect(Self.matches(g, e), "\(g)\nexpected \(e)")
        }
        #expect(got.contains { $0["result"]?["notices"]?.arrayValue?.first?.stringValue?.contains("\(address), is taken") == true }, "\(got)")
    }

    @Test func examplesExist() {
        #expect(Self.examples.contains("hello"))
        #expect(FileManager.default.isExecutableFile(atPath: DaemonProcess.binary.path), "build quire first: swift build")
    }

    @Test(arguments: examples)
    func transcriptFromAFileInLineMode(name: String) throws {
        let directory = Self.repository.appendingPathComponent("protocol/examples")
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.environment = DaemonProcess.isolatedEnvironment([:])
        process.standardInput = try FileHandle(forReadingFrom: directory.appendingPathComponent("\(name).jsonl"))
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let got = try Self.replies(String(decoding: data, as: UTF8.self).split(separator: "\n").map { try JSONParser().parse(String($0)) })
        let expected = try Self.expectedReplies(name)
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) {
            #expect(Self.matches(g, e), "\(g)\nexpected \(e)")
        }
    }

    @Test(arguments: examples)
    func transcriptThroughAPipeWithContentLengthFraming(name: String) throws {
        let directory = Self.repository.appendingPathComponent("protocol/examples")
        let daemon = try DaemonProcess()
        for line in Self.lines(directory.appendingPathComponent("\(name).jsonl").path) { daemon.send(line) }
        #expect(daemon.waitForExit() == 0)
        let expected = try Self.expectedReplies(name)
        let got = Self.replies(daemon.waitForMessages(Int.max, timeout: 5))
        #expect(got.count == expected.count)
        for (g, e) in zip(got, expected) {
            #expect(Self.matches(g, e), "\(g)\nexpected \(e)")
        }
    }

    @Test func everyConformanceFileGetsOneAnswerAndTheDaemonKeepsServing() throws {
        let directory = Self.repository.deletingLastPathComponent().appendingPathComponent("shared/conformance/json")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count == 318)
        let daemon = try DaemonProcess()
        daemon.send(#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{}}"#)
        for name in names {
            let body = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            daemon.send(bytes: Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        }
        daemon.send(#"{"jsonrpc":"2.0","id":"last","method":"document/list"}"#)
        let last = daemon.waitFor { $0["id"] == "last" }
        #expect(last?["result"] == [])
        let replies = daemon.messages
        // One reply for the initialize, one per file, one for the final request.
        #expect(replies.count == names.count + 2)
        for (name, reply) in zip(names, replies.dropFirst()) {
            let isParseError = reply["error"]?["code"] == -32700
            if name.hasPrefix("n_") { #expect(isParseError, "\(name) must be a parse error") }
            if name.hasPrefix("y_") && name != "y_object_escaped_null_in_key.json" { #expect(!isParseError, "\(name) is valid JSON") }
        }
        daemon.send(#"{"jsonrpc":"2.0","id":"bye","method":"shutdown"}"#)
        daemon.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(daemon.waitForExit() == 0)
    }

    @Test func truncatedFrameAtEndOfInputEndsWithStatusOne() throws {
        let daemon = try DaemonProcess()
        daemon.send(bytes: Array("Content-Length: 100\r\n\r\n{\"jsonrpc\"".utf8))
        daemon.closeInput()
        #expect(daemon.waitForExit() == 1)
    }

    @Test func invalidUTF8GetsAParseErrorAndTheDaemonGoesOn() throws {
        let daemon = try DaemonProcess()
        let body: [UInt8] = Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"user":{"name":""#.utf8) + [0xFF, 0xFE] + Array(#""}}}"#.utf8)
        daemon.send(bytes: Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        daemon.send(#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#)
        #expect(daemon.waitForMessages(1).first?["error"]?["code"] == -32700)
        #expect(daemon.reply(to: 2)?["result"] != nil)
    }
}

/// How the daemon is started must never crash it: stdin or stdout on /dev/null, SIGTERM.
@Suite(.serialized) struct ProcessEnvironmentTests {
    @Test func devNullOnBothEndsEndsWithStatusOne() throws {
        let process = Process()
        process.executableURL = DaemonProcess.binary
        process.environment = DaemonProcess.isolatedEnvironment([:])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 1, "end of input without shutdown")
    }

    @Test func sigtermEndsTheDaemonCleanly() throws {
        let daemon = try DaemonProcess(arguments: ["--log-level", "info"])
        daemon.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#)
        #expect(daemon.reply(to: 1) != nil)
        daemon.process.terminate()
        #expect(daemon.waitForExit() == 0)
        #expect(daemon.log.contains("shutting down"))
    }
}
