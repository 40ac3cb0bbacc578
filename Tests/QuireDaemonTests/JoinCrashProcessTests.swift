import Foundation
import JSON
import Logging
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// The real joiner killed with SIGKILL as soon as its editor hears that every file of the
/// joined project is on disk (`project/progress`; under `--durability sync` nothing reaches an
/// editor before what it depends on is durable, under `batch` every write is in the kernel at
/// once): its documents are then mostly in their pack, with their sharing, operations and file
/// bindings as log records (`DocumentFiles+Records`). Its data directory loads every document
/// with the file's text, the host as holder and the binding to that file; an edit made after a
/// restart is acknowledged, killed again, and loads with the rest.
@Suite(.serialized) struct JoinCrashProcessTests {
    static let files = 40

    static func initialize(_ daemon: DaemonProcess) {
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": ["user": ["name": "crash"], "capabilities": ["general": ["positionEncodings": ["utf-32"]]]]])
        #expect(daemon.reply(to: 1) != nil, "no reply to initialize: \(daemon.log)")
    }

    static func load(_ path: String) throws -> (documents: [DocumentStore.LoadedDocument], log: [String]) {
        let capture = LogCapture()
        let store = try DocumentStore(path: path, logger: capture.logger)
        return (store.loadDocuments(), capture.all)
    }

    @Test(arguments: ["sync", "batch"])
    func aJoinedProjectSurvivesKillNine(durability: String) throws {
        let base = DaemonProcess.temporaryDirectory("joincrash")
        let root = base + "/src", joined = base + "/joined"
        var texts: [String: String] = [:]   // relative path: text
        for index in 0..<Self.files {
            let path = "folder\(index % 4)/file\(index).txt"
            let text = "file \(index)\n" + String(repeating: "line of \(index)\n", count: index % 5 + 1)
            try FileManager.default.createDirectory(atPath: root + "/folder\(index % 4)", withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/" + path))
            texts[path] = text
        }
        let arguments = ["--durability", durability, "--log-level", "info"]
        let host = try DaemonProcess(arguments: ["--data-dir", base + "/host"] + arguments)
        defer { host.closeInput(); _ = host.waitForExit() }
        var joiner = try DaemonProcess(arguments: ["--data-dir", base + "/joiner"] + arguments)
        Self.initialize(host)
        Self.initialize(joiner)
        host.send(["jsonrpc": "2.0", "id": 2, "method": "project/share", "params": ["root": .string(root), "listen": ["127.0.0.1:0"]]])
        let line = try #require(host.reply(to: 2, timeout: 60)?["result"]?["line"], "\(host.log)")
        joiner.send(["jsonrpc": "2.0", "id": 2, "method": "project/join", "params": ["line": line, "directory": .string(joined)]])
        #expect(joiner.reply(to: 2, timeout: 60)?["result"] != nil, "\(joiner.log)")
        let complete = joiner.waitFor(timeout: 120) { message in
            guard message["method"] == "project/progress", let files = message["params"]?["files"]?.integerValue,
                  let written = message["params"]?["written"]?.integerValue else { return false }
            return files == Int64(Self.files) && written >= files
        }
        kill(joiner.process.processIdentifier, SIGKILL)
        joiner.process.waitUntilExit()
        try #require(complete != nil, "the joiner never said the project was on disk: \(joiner.log)")

        let (documents, log) = try Self.load(base + "/joiner")
        #expect(documents.count == Self.files, "\(documents.map(\.uri))")
        #expect(!log.contains { $0.hasPrefix("error") }, "\(log)")
        var boundPaths: Set<String> = []
        for document in documents {
            let binding = try #require(document.binding, "\(document.uri) lost its binding")
            #expect(binding.path.hasPrefix(joined + "/"), "\(binding.path)")
            let relative = String(binding.path.dropFirst(joined.count + 1))
            boundPaths.insert(relative)
            #expect(document.text.string == texts[relative], "\(document.uri) at \(relative)")
            #expect(binding.base.string == texts[relative], "\(document.uri)'s binding base")
            #expect(document.shared && document.sharing.holders.count == 1, "\(document.uri): \(document.sharing.holders)")
        }
        #expect(boundPaths == Set(texts.keys))

        // A restart, an edit acknowledged, SIGKILL again: the edit is there, and the rest as before.
        let edited = try #require(documents.first { $0.binding?.path == joined + "/folder1/file1.txt" })
        joiner = try DaemonProcess(arguments: ["--data-dir", base + "/joiner"] + arguments)
        Self.initialize(joiner)
        joiner.send(["jsonrpc": "2.0", "id": 3, "method": "document/open", "params": ["uri": .string(edited.uri)]])
        #expect(joiner.reply(to: 3)?["result"] != nil, "\(joiner.log)")
        let at: JSONValue = ["line": 0, "character": 0]
        joiner.send(["jsonrpc": "2.0", "id": 4, "method": "document/edit",
                     "params": ["uri": .string(edited.uri), "epoch": 0, "revision": 0,
                                "changes": [["range": ["start": at, "end": at], "text": "edited "]]]])
        let reply = joiner.reply(to: 4)
        #expect(reply?["result"] != nil, "\(String(describing: reply)) \(joiner.log)")
        kill(joiner.process.processIdentifier, SIGKILL)
        joiner.process.waitUntilExit()
        let (again, againLog) = try Self.load(base + "/joiner")
        #expect(again.count == Self.files)
        #expect(!againLog.contains { $0.hasPrefix("error") }, "\(againLog)")
        for document in again {
            let relative = document.binding.map { String($0.path.dropFirst(joined.count + 1)) } ?? "unbound \(document.uri)"
            let expected = document.id == edited.id ? "edited " + (texts[relative] ?? "") : texts[relative]
            #expect(document.text.string == expected, "\(document.uri) at \(relative)")
            #expect(document.shared && document.sharing.holders.count == 1, "\(document.uri)")
        }
    }
}
