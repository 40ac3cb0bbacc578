import JSON
import QuireConsole
import QuireProject
import Testing

/// The words of `quire share` and `quire join`: the screens, the live lines, the progress, and
/// that nothing from the daemon reaches the terminal uncleaned.
@Suite struct ConsoleScreenTests {
    static let line = try! JoinLine(name: "greeter", addresses: [PeerAddress("192.168.1.20:7070")],
                                    secret: Array(repeating: 7, count: 30), fingerprint: "3f1c-0a9e-77b2-10ff-0000-abcd-ef01-2345")
    /// Terminal escapes, a line break, a right-to-left override and a bell: what a hostile name
    /// would use to clear the screen, forge a line or hide text.
    static let hostile = "\u{1B}[2J\u{1B}]0;owned\u{07}mal\nlory\u{202E}\r"

    static func isClean(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.generalCategory == .format }
    }

    static func shareReply(skipped: Int, name: String = "greeter", path: String = "build/app.bin") -> JSONValue {
        let entries: [JSONValue] = (0..<skipped).map { index in
            ["path": .string(index == 0 ? path : "data/file\(index).bin"), "reason": "binary"]
        }
        return ["key": "3fa29c1b00d4e6f1", "name": .string(name), "root": "/home/ann/greeter", "line": .string(line.encoded),
                "files": 142, "skipped": .array(entries), "addresses": ["192.168.1.20:7070"]]
    }

    @Test func theShareScreenNamesTheProjectItsFilesWhatIsLeftOutAndTheLine() throws {
        let project = try SharedProject(reply: Self.shareReply(skipped: 8))
        let screen = ConsoleScreen.shared(project, daemonNote: "note")
        #expect(screen.first == "Sharing \"greeter\" from /home/ann/greeter: 142 files shared.")
        #expect(screen.contains("Left out: 8 files."))
        #expect(screen.contains("  build/app.bin: binary"))
        #expect(screen.filter { $0.hasSuffix(": binary") }.count == ConsoleScreen.shownLeftOut)
        #expect(screen.contains("  and 3 more"))
        #expect(screen.contains("Listening on 192.168.1.20:7070."))
        #expect(screen.contains("    quire join \(Self.line.encoded)"))
        #expect(screen.last?.contains("Ctrl-C stops sharing") == true)
        let nothingLeftOut = ConsoleScreen.shared(try SharedProject(reply: Self.shareReply(skipped: 0)), daemonNote: "note")
        #expect(!nothingLeftOut.contains { $0.hasPrefix("Left out") })
    }

    @Test func namesPathsAndReasonsFromTheDaemonAreCleaned() throws {
        var reply = Self.shareReply(skipped: 2, name: Self.hostile, path: "a\u{1B}[1Ab\n.bin")
        if case .object(var members) = reply {
            members["skipped"] = [["path": "x\u{9B}y", "reason": .string(Self.hostile + String(repeating: "r", count: 2000))]]
            reply = .object(members)
        }
        let project = try SharedProject(reply: reply)
        #expect(project.name == "[2J]0;ownedmallory")
        for line in ConsoleScreen.shared(project, daemonNote: "") {
            #expect(Self.isClean(line), "\(line.debugDescription)")
            #expect(line.count < 700)
        }
        let changed = ConsoleScreen.peerChanged(["event": "left", "link": 3, "user": .string(Self.hostile + String(repeating: "n", count: 500)),
                                                  "address": "10.0.0.2:7070", "reason": .string(Self.hostile)])
        let shown = try #require(changed)
        #expect(Self.isClean(shown))
        #expect(shown.hasPrefix("[2J]0;ownedmallory"))
        #expect(shown.count < 64 + 400 + 40)
    }

    @Test func peerEventsReadAsSentences() {
        #expect(ConsoleScreen.peerChanged(["event": "joined", "link": 2, "user": "bob", "address": "10.0.0.2:50123", "linksUp": 1])
            == "bob (10.0.0.2:50123) joined.")
        #expect(ConsoleScreen.peerChanged(["event": "left", "link": 2, "user": "bob", "address": "", "reason": "bye", "linksUp": 0])
            == "bob left: bye.")
        #expect(ConsoleScreen.peerChanged(["event": "left", "link": 2, "user": "", "address": "10.0.0.2:50123", "linksUp": 0])
            == "10.0.0.2:50123 left.")
        #expect(ConsoleScreen.peerChanged(["event": "failed", "link": 4, "user": "", "address": "10.0.0.9:4000",
                                           "reason": "authentication failed", "linksUp": 0])
            == "Authentication failed (10.0.0.9:4000).")
        #expect(ConsoleScreen.peerChanged(["event": "failed", "link": 0, "user": "", "address": "",
                                           "reason": "19 more peer attempts failed within 10 seconds", "linksUp": 0])
            == "19 more peer attempts failed within 10 seconds.")
        #expect(ConsoleScreen.peerChanged(["event": "renamed"]) == nil)
        #expect(ConsoleScreen.peerChanged(["user": "bob"]) == nil)
    }

    @Test func liveLinesShowOnlyTheirOwnProject() {
        let ours = "3fa29c1b00d4e6f1"
        let progress: JSONValue = ["key": .string(ours), "name": "greeter", "files": 10, "written": 5, "bytes": 2048]
        #expect(ConsoleScreen.liveLine(method: "project/progress", params: progress, key: ours) == "\"greeter\": 5 of 10 files on disk (2.0 KB, 50%)")
        #expect(ConsoleScreen.liveLine(method: "project/progress", params: progress, key: "0000000000000000") == nil)
        let elsewhere: JSONValue = ["event": "joined", "link": 2, "user": "bob", "address": "", "scope": "project 0000000000000000"]
        #expect(ConsoleScreen.liveLine(method: "peer/changed", params: elsewhere, key: ours) == nil)
        let here: JSONValue = ["event": "joined", "link": 2, "user": "bob", "address": "", "scope": .string("project " + ours)]
        #expect(ConsoleScreen.liveLine(method: "peer/changed", params: here, key: ours) == "bob joined.")
        #expect(ConsoleScreen.liveLine(method: "peer/changed", params: ["event": "joined", "link": 2, "user": "bob", "scope": "general"], key: ours) == nil)
        #expect(ConsoleScreen.liveLine(method: "document/edit", params: here, key: ours) == nil)
        #expect(ConsoleScreen.liveLine(method: "window/showMessage", params: ["type": 2, "message": "disk full\u{1B}[2J\n"], key: ours)
            == "Warning: disk full[2J")
        #expect(ConsoleScreen.liveLine(method: "window/showMessage", params: ["type": 1, "message": "gone"], key: ours) == "Error: gone")
        #expect(ConsoleScreen.liveLine(method: "window/showMessage", params: ["type": 1], key: ours) == nil)
    }

    @Test func aReplyWithoutAKeyOrAWorkingLineIsRefused() {
        func refusal(_ change: (inout [String: JSONValue]) -> Void) -> String? {
            guard case .object(var members) = Self.shareReply(skipped: 0) else { return nil }
            change(&members)
            do {
                _ = try SharedProject(reply: .object(members))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(refusal { $0["key"] = nil }?.contains("no project key") == true)
        #expect(refusal { $0["key"] = "3FA29C1B" }?.contains("no project key") == true)
        #expect(refusal { $0["key"] = "3fa2 9c1b" }?.contains("no project key") == true)
        #expect(refusal { $0["line"] = nil }?.contains("no join line") == true)
        #expect(refusal { $0["line"] = .string(String(Self.line.encoded.dropLast(3))) }?.contains("cut short") == true)
        #expect(refusal { _ in } == nil)
    }

    @Test func theProgressBarFillsWithTheFilesOnDisk() {
        let empty = ProjectProgress(key: "k", name: "p", files: 142, written: 0, bytes: 0)
        #expect(ConsoleScreen.progressBar(empty, width: 10) == "[----------]  0/142 files  0 B")
        let half = ProjectProgress(key: "k", name: "p", files: 142, written: 71, bytes: 1_234_567)
        #expect(ConsoleScreen.progressBar(half, width: 10) == "[#####-----]  71/142 files  1.2 MB")
        let over = ProjectProgress(key: "k", name: "p", files: 3, written: 9, bytes: -5)
        #expect(over.written == 3 && over.bytes == 0 && over.isComplete && over.percent == 100)
        let none = ProjectProgress(key: "k", name: "p", files: 0, written: 0, bytes: 0)
        #expect(none.isComplete && ConsoleScreen.progressBar(none, width: 4) == "[####]  0/0 files  0 B")
        #expect(ProjectProgress(["key": "k", "files": 3]) == nil)
        #expect(ProjectProgress(["key": "K!", "files": 3, "written": 1]) == nil)
        let huge = ProjectProgress(["key": "k", "name": "p", "files": .integer(Int64.max), "written": .integer(Int64.max), "bytes": .integer(Int64.max)])
        #expect(huge?.files == 1 << 40 && huge?.percent == 100)
    }

    @Test func sizesReadAsPeopleSayThem() {
        #expect(ConsoleScreen.size(0) == "0 B")
        #expect(ConsoleScreen.size(999) == "999 B")
        #expect(ConsoleScreen.size(1000) == "1.0 KB")
        #expect(ConsoleScreen.size(3_456) == "3.5 KB")
        #expect(ConsoleScreen.size(30_000_000) == "30.0 MB")
        #expect(ConsoleScreen.size(2_500_000_000) == "2.5 GB")
    }

    @Test func theJoinScreensNameTheProjectAndFolder() {
        #expect(ConsoleScreen.joining(name: "greeter", directory: "/home/bob/greeter") == "Joining \"greeter\" into /home/bob/greeter...")
        #expect(ConsoleScreen.joined(name: "greeter", files: 1, directory: "/d").first == "1 file of \"greeter\" is in /d.")
        #expect(ConsoleScreen.joined(name: "greeter", files: 142, directory: "/d").first == "142 files of \"greeter\" are in /d.")
        #expect(ConsoleScreen.stoppedSharing("greeter") == "Sharing \"greeter\" stopped.")
        #expect(ConsoleScreen.alreadyRunning("greeter", sharing: false) == "\"greeter\" was already followed before this command: Ctrl-C here leaves it so.")
        #expect(ConsoleScreen.leftRunning("gr\u{1B}[2Jeeter", sharing: true) == "Left \"gr[2Jeeter\" shared, as it was before.")
    }
}

/// The terminal: a bar redrawn in place on a terminal, plain lines at every tenth otherwise,
/// and live lines never mixed into the bar.
@Suite struct ConsoleTerminalTests {
    final class Sink: @unchecked Sendable {
        var text = ""
        func write(_ bytes: [UInt8]) { text += String(decoding: bytes, as: UTF8.self) }
    }

    @Test func withoutATerminalProgressIsAPlainLineAtEveryTenth() {
        let sink = Sink()
        let terminal = ConsoleTerminal(isTerminal: false, output: sink.write, clock: { "12:00:00" })
        for written in 0...250 {
            terminal.progress(ProjectProgress(key: "k", name: "p", files: 250, written: written, bytes: written * 10))
        }
        let lines = sink.text.split(separator: "\n")
        #expect(lines.count == 11)
        #expect(lines.first == "\"p\": 0 of 250 files on disk (0 B, 0%)")
        #expect(lines.last == "\"p\": 250 of 250 files on disk (2.5 KB, 100%)")
        #expect(!sink.text.contains("\u{1B}") && !sink.text.contains("\r"))
    }

    @Test func onATerminalTheBarStaysUnderTheLiveLines() {
        let sink = Sink()
        let terminal = ConsoleTerminal(isTerminal: true, output: sink.write, clock: { "12:00:00" })
        terminal.progress(ProjectProgress(key: "k", name: "p", files: 4, written: 1, bytes: 0))
        terminal.event("bob joined.")
        terminal.progress(ProjectProgress(key: "k", name: "p", files: 4, written: 4, bytes: 0))
        terminal.say("done")
        let bar = ConsoleScreen.progressBar(ProjectProgress(key: "k", name: "p", files: 4, written: 1, bytes: 0))
        let full = ConsoleScreen.progressBar(ProjectProgress(key: "k", name: "p", files: 4, written: 4, bytes: 0))
        #expect(sink.text == "\r\u{1B}[K\(bar)" + "\r\u{1B}[K12:00:00  bob joined.\n\(bar)" + "\r\u{1B}[K\(full)\n" + "done\n")
    }

    @Test func aBarLeftUnfinishedStaysAboveTheLastLine() {
        let sink = Sink()
        let terminal = ConsoleTerminal(isTerminal: true, output: sink.write, clock: { "12:00:00" })
        terminal.progress(ProjectProgress(key: "k", name: "p", files: 4, written: 1, bytes: 0))
        terminal.endProgress()
        terminal.say("stopped")
        terminal.endProgress()
        let bar = ConsoleScreen.progressBar(ProjectProgress(key: "k", name: "p", files: 4, written: 1, bytes: 0))
        #expect(sink.text == "\r\u{1B}[K\(bar)\nstopped\n")
    }
}
