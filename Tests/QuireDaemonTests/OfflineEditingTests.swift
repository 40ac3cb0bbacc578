import EditingTraces
import Foundation
import JSON
import Testing
import QuireTestSupport

/// Offline-first: two paired daemons, each with its own data directory, are killed, edit apart
/// after restarting, are killed again, and meet again: every edit of both sides is there.
@Suite(.serialized) struct OfflineEditingTests {
    static let secret = PeerProcessTests.secret

    static func daemon(_ dataDirectory: String, _ arguments: [String] = []) throws -> DaemonProcess {
        try DaemonProcess(arguments: ["--data-dir", dataDirectory] + arguments, environment: secret)
    }

    static func listening(_ dataDirectory: String) throws -> (DaemonProcess, Int) {
        let daemon = try daemon(dataDirectory, ["--listen", "127.0.0.1:0"])
        let line = daemon.waitForLog(containing: "listening for peers on") ?? ""
        return (daemon, Int(line.split(separator: ":").last ?? "") ?? 0)
    }

    static func waitForLink(_ editor: TestEditor) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if editor.request("peer/status")["result"]?["links"]?.arrayValue?.first?["state"] == "established" { return true }
            usleep(10_000)
        }
        return false
    }

    static func killNine(_ daemons: DaemonProcess...) {
        for daemon in daemons {
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
        }
    }

    /// Types `lines` at random places of an editor alone on its daemon, each acknowledged.
    static func typeAlone(_ dataDirectory: String, user: String, lines: [String], seed: UInt64) throws {
        let daemon = try daemon(dataDirectory)
        let editor = TestEditor(process: daemon)
        editor.initialize(user: user)
        editor.open("doc", text: "")
        var random = SeededRandom(seed: seed)
        for line in lines {
            let breaks = [0] + editor.text.indices.filter { editor.text[$0] == "\n" }.map { $0 + 1 }
            let at = breaks.randomElement(using: &random) ?? 0
            #expect(editor.edit(at..<at, with: line + "\n")["result"]?["editorRevision"] != nil)
        }
        killNine(daemon)
    }

    @Test func editsMadeApartAndAcrossRestartsMergeWhenTheLinkReturns() throws {
        let dataA = DaemonProcess.temporaryDirectory("offline-a"), dataB = DaemonProcess.temporaryDirectory("offline-b")
        // Paired once, so both hold the same document.
        do {
            let (a, port) = try Self.listening(dataA)
            let ann = TestEditor(process: a)
            ann.initialize(user: "ann")
            ann.open("doc", text: "shared\n")
            let b = try Self.daemon(dataB, ["--connect", "127.0.0.1:\(port)"])
            let bob = TestEditor(process: b)
            bob.initialize(user: "bob")
            #expect(Self.waitForLink(bob))
            #expect(bob.waitForDocument("doc", characters: "shared\n".unicodeScalars.count))
            bob.open("doc", text: "")
            #expect(bob.string == "shared\n")
            Self.killNine(a, b)
        }
        // Apart, each restarted twice, typing in between.
        let annLines = (1...20).map { "ann \($0) é" }, bobLines = (1...20).map { "bob \($0) 😀" }
        try Self.typeAlone(dataA, user: "ann", lines: Array(annLines[..<10]), seed: 1)
        try Self.typeAlone(dataB, user: "bob", lines: Array(bobLines[..<10]), seed: 2)
        try Self.typeAlone(dataA, user: "ann", lines: Array(annLines[10...]), seed: 3)
        try Self.typeAlone(dataB, user: "bob", lines: Array(bobLines[10...]), seed: 4)
        // Together again.
        let (a, port) = try Self.listening(dataA)
        let b = try Self.daemon(dataB, ["--connect", "127.0.0.1:\(port)"])
        let ann = TestEditor(process: a), bob = TestEditor(process: b)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "")
        bob.open("doc", text: "")
        #expect(Self.waitForLink(bob))
        #expect(PeerProcessTests.waitUntilConverged(ann, bob))
        let lines = ann.string.split(separator: "\n").map(String.init)
        #expect(Set(lines) == Set(["shared"] + annLines + bobLines), "\(ann.string)")
        #expect(lines.count == 41)
        #expect(!a.log.contains("error"), "\(a.log)")
        PeerProcessTests.shutDown([ann, bob], [a, b])
    }
}
