import EditingTraces
import Foundation
import JSON
import Testing
import QuireTestSupport

/// The real daemon killed with SIGKILL while new documents are in their pack and the maker's
/// thread gives them their own files: projects opened in one write, then edits streamed to
/// them (some written into the pack, some claiming a document from it, some snapshotting it),
/// the daemon killed at a random reply or a random moment of the maker's rounds. After every
/// restart each acknowledged document is there once, with every acknowledged edit, and no
/// document that was never sent.
@Suite(.serialized) struct PackCrashTests {
    static func frame(_ value: JSONValue) -> [UInt8] {
        let body = JSONSerializer().string(value)
        return Array("Content-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    /// The names of the documents in `dataDirectory`'s own directories (loading made every
    /// packed one by then).
    static func documentNames(_ dataDirectory: String) throws -> [String] {
        let documents = dataDirectory + "/documents"
        return try FileManager.default.contentsOfDirectory(atPath: documents).filter { !$0.hasSuffix(".tmp") }.compactMap { name in
            guard let data = FileManager.default.contents(atPath: documents + "/" + name + "/document.json") else { return nil }
            return try JSONParser().parse(Array(data))["uri"]?.stringValue
        }
    }

    @Test(arguments: [(505, "sync"), (606, "batch")] as [(UInt64, String)])
    func killNineWhileDocumentsLeaveTheirPackLosesNothing(seed: UInt64, durability: String) throws {
        let dataDirectory = DaemonProcess.temporaryDirectory("packcrash")
        var random = SeededRandom(seed: seed)
        var known: [String: String] = [:]               // uri: its text, checked at the last start
        var candidates: [String: [String]] = [:]         // uri: the texts it may come back with
        var acknowledgedEdits: [String: Int] = [:]       // uri: how many of its candidates' edits were acknowledged
        var sent: Set<String> = []
        for round in 0...5 {
            let daemon = try DaemonProcess(arguments: ["--data-dir", dataDirectory, "--durability", durability,
                                                       "--snapshot-log-bytes", "1024", "--log-level", "info"])
            daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": ["capabilities": ["general": ["positionEncodings": ["utf-32"]]]]])
            #expect(daemon.reply(to: 1) != nil, "round \(round): no reply to initialize: \(daemon.log)")
            var id: Int64 = 10
            for uri in Set(known.keys).union(candidates.keys).sorted() {
                daemon.send(["jsonrpc": "2.0", "id": .integer(id), "method": "document/open", "params": ["uri": .string(uri)]])
                daemon.send(["jsonrpc": "2.0", "id": .integer(id + 1), "method": "document/text", "params": ["uri": .string(uri)]])
                let text = daemon.reply(to: id + 1)?["result"]?["text"]?.stringValue
                id += 2
                if let options = candidates[uri] {
                    let index = text.flatMap { options.firstIndex(of: $0) }
                    // A document whose open was not acknowledged may be missing (it opens empty now).
                    if index == nil, acknowledgedEdits[uri] == nil, text == "" { continue }
                    #expect(index != nil, "round \(round): \(uri) came back as \(text.debugDescription), not one of \(options)")
                    #expect((index ?? -1) >= acknowledgedEdits[uri, default: 0], "round \(round): \(uri) lost acknowledged edits")
                    if let text { known[uri] = text }
                } else {
                    #expect(text == known[uri], "round \(round): \(uri) came back as \(text.debugDescription)")
                }
            }
            #expect(!daemon.log.contains("error"), "round \(round): \(daemon.log)")
            let names = try Self.documentNames(dataDirectory)
            #expect(names.count == Set(names).count, "round \(round): a document is there twice: \(names.sorted())")
            #expect(Set(names).isSubset(of: sent), "round \(round): documents never sent: \(Set(names).subtracting(sent))")
            candidates = [:]
            acknowledgedEdits = [:]
            guard round < 5 else {
                // A normal exit (stdin closed) right after a burst, while the maker's thread waits
                // for quiet or works: it waits for the thread; every document has its own files.
                var frames: [UInt8] = []
                for i in 0..<200 {
                    frames += Self.frame(["jsonrpc": "2.0", "id": .integer(1_000 + Int64(i)), "method": "document/open",
                                          "params": ["uri": .string("last/file\(i)"), "text": .string("last \(i)\n")]])
                }
                daemon.send(bytes: frames)
                #expect(daemon.reply(to: 1_199) != nil)
                daemon.closeInput()
                #expect(daemon.waitForExit() != nil)
                let names = Set(try Self.documentNames(dataDirectory))
                #expect(names.isSuperset(of: (0..<200).map { "last/file\($0)" }), "\(names.count) documents have their own files")
                #expect(try FileManager.default.contentsOfDirectory(atPath: dataDirectory + "/packs").isEmpty)
                break
            }

            // A project opened in one write, then edits to its documents and older ones.
            var frames: [UInt8] = []
            var requests: [Int64: String] = [:]          // request id: the uri it opens or edits
            var editIndex: [Int64: Int] = [:]            // request id: which candidate its edit makes
            var texts: [String: String] = [:]
            let count = Int.random(in: 20...90, using: &random)
            for i in 0..<count {
                let uri = "round\(round)/file\(i).swift"
                let text = "let v\(i) = \(Int.random(in: 0...9_999, using: &random))\n"
                frames += Self.frame(["jsonrpc": "2.0", "id": .integer(1_000 + Int64(i)), "method": "document/open",
                                      "params": ["uri": .string(uri), "text": .string(text)]])
                requests[1_000 + Int64(i)] = uri
                texts[uri] = text
                candidates[uri] = [text]
                sent.insert(uri)
            }
            daemon.send(bytes: frames)
            let lastOpen = Int64(1_000 + count - 1)
            let killDuringOpens = Int.random(in: 0..<4, using: &random) == 0
            if !killDuringOpens {
                _ = daemon.reply(to: lastOpen)
                let targets = Array(texts.keys.sorted()) + known.keys.sorted()
                var editFrames: [UInt8] = []
                let edits = Int.random(in: 30...200, using: &random)
                for k in 0..<edits {
                    guard let uri = targets.randomElement(using: &random) else { break }
                    var current = texts[uri] ?? known[uri] ?? ""
                    if candidates[uri] == nil { candidates[uri] = [current] }
                    let insert = "e\(round).\(k) "
                    current = insert + current
                    texts[uri] = current
                    candidates[uri, default: []].append(current)
                    let request = Int64(5_000 + k)
                    requests[request] = uri
                    editIndex[request] = (candidates[uri]?.count ?? 1) - 1
                    let at: JSONValue = ["line": 0, "character": 0]
                    editFrames += Self.frame(["jsonrpc": "2.0", "id": .integer(request), "method": "document/edit",
                                              "params": ["uri": .string(uri), "epoch": 0, "revision": 0,
                                                         "changes": [["range": ["start": at, "end": at], "text": .string(insert)]]]])
                }
                // Edits arrive while the maker's thread waits for quiet or works on its rounds.
                let pieces = Int.random(in: 1...4, using: &random)
                let size = (editFrames.count + pieces - 1) / pieces
                for start in stride(from: 0, to: editFrames.count, by: size) {
                    let end = Swift.min(editFrames.count, start + size)
                    daemon.send(bytes: Array(editFrames[start..<end]))
                    // A random moment of the maker's quiet wait or round (a kill point, not a wait for anything).
                    usleep(useconds_t(Int.random(in: 0...250_000, using: &random)))
                }
                if Bool.random(using: &random) { _ = daemon.reply(to: Int64(5_000 + Int.random(in: 0..<edits, using: &random))) }
            } else {
                _ = daemon.reply(to: Int64(1_000 + Int.random(in: 0..<count, using: &random)))
            }
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
            _ = daemon.waitForMessages(Int.max, timeout: 1)
            for message in daemon.messages {
                guard let request = message["id"]?.integerValue, let uri = requests[request] else { continue }
                #expect(message["error"] == nil, "round \(round): \(message)")
                if let index = editIndex[request] {
                    acknowledgedEdits[uri] = max(acknowledgedEdits[uri, default: 0], index)
                } else {
                    acknowledgedEdits[uri] = max(acknowledgedEdits[uri, default: 0], 0)
                }
            }
        }
    }
}
