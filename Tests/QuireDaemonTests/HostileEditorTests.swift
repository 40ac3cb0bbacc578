import Foundation
import JSON
import QuireProtocol
import ReplicatingTypes
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// An editor that sends what no client should: names made of control characters and escape
/// sequences, colours that are no colours, notifications as requests. Nothing of it reaches
/// other editors, peers or the log as sent.
@Suite struct HostileEditorTests {
    @Test func anEditorsOwnNameAndColourAreCleanedAndBoundedBeforeAnyoneSeesThem() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let mallory = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon)
        let hostile = "\u{1B}[2J\u{1B}]0;owned\u{7}Mal\nlory\u{202E}" + String(repeating: "x", count: 10_000)
        let reply = mallory.request("initialize", [
            "clientInfo": ["name": "evil\u{1B}[31m\nclient"],
            "user": ["name": .string(hostile), "color": .string("red; hi! " + String(repeating: "c", count: 10_000))],
        ])
        mallory.notify("initialized")
        let shown = reply["result"]?["user"]?["name"]?.stringValue ?? ""
        #expect(shown == "[2J]0;ownedMallory" + String(repeating: "x", count: PeerLink.maximumUserNameLength - 18), "\(shown.prefix(80))")
        #expect(shown.unicodeScalars.count == PeerLink.maximumUserNameLength)
        #expect(reply["result"]?["user"]?["color"] == nil, "a colour that is not #rrggbb is dropped")
        bob.initialize(user: "bob")
        bob.open("notes.txt", text: "x\n")
        mallory.open("notes.txt", text: "x\n")
        _ = bob.take("cursor/update")
        mallory.notify("cursor/update", ["uri": "notes.txt", "epoch": 0, "revision": 0,
                                          "selections": [["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 1]]]])
        let seen = bob.take("cursor/update").compactMap { $0["params"]?["user"]?["name"]?.stringValue }
        #expect(seen == [shown], "others are shown the cleaned name")
        let people = bob.request("quire/status")["result"]?["summary"]?["people"]?.arrayValue ?? []
        #expect(people.compactMap { $0["name"]?.stringValue } == [shown])
    }

    @Test func aValidColourIsKeptAndANameOfNothingButControlsFallsBack() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        let reply = editor.request("initialize", ["user": ["name": "\u{1B}\u{7}\n ", "color": "#12abEF"]])
        #expect(reply["result"]?["user"] == ["name": .string(daemon.configuration.userName), "color": "#12abEF"])
    }

    @Test func aNotificationSentAsARequestIsToldSo() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let editor = TestEditor(daemon: daemon)
        editor.initialize()
        let error = editor.request("initialized")["error"]
        #expect(error?["code"] == -32601)
        #expect(error?["message"] == "Method not found: initialized is a notification, send it without an id")
        #expect(editor.request("textDocument/hover")["error"]?["message"] == "Method not found: textDocument/hover")
    }

    /// A `.gitconfig` whose user.name is invalid UTF-8 with terminal escapes and 10 KB long: the
    /// name the daemon falls back to is decoded, cleaned and cut.
    @Test func aHostileGitUserNameIsCleanedAndCut() throws {
        let home = DaemonProcess.temporaryDirectory("home")
        let config: [UInt8] = Array("[user]\n\tname = Ad".utf8) + [0xFF, 0xFE] + Array("a \u{1B}[31mLove\u{7}lace".utf8)
            + Array(repeating: UInt8(ascii: "z"), count: 10_000) + [0x0A]
        try Data(config).write(to: URL(fileURLWithPath: home + "/.gitconfig"))
        let environment = ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "GIT_CONFIG_NOSYSTEM": "1",
                           "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let raw = try #require(UserNameFallback.gitConfigUserName(environment: environment, directory: home))
        #expect(raw.unicodeScalars.count <= 4096, "at most 4 KiB of git's output is read")
        let name = UserNameFallback.resolve(environment: ["USER": "bea"], gitUserName: { raw }, loginName: { nil })
        #expect(name.hasPrefix("Ad\u{FFFD}\u{FFFD}a [31mLovelacezzz"), "\(name.prefix(40).debugDescription)")
        #expect(name.unicodeScalars.count == PeerLink.maximumUserNameLength)
        #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control })
    }
}
