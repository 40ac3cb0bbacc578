import Foundation
import JSON
import QuireProtocol
import Testing
@testable import QuireDaemon
import QuireTestSupport

/// Who a person is shown as when their editor gives no name (git's `user.name`, `$USER`, the
/// login), and the status summary the daemon counts so that clients only word it.
@Suite struct StatusAndNamesTests {
    @Test func aNameFallsBackFromGitToUserToTheLoginToSomeone() {
        #expect(UserNameFallback.resolve(environment: ["USER": "bea"], gitUserName: { "Ada Lovelace" }, loginName: { "root" }) == "Ada Lovelace")
        #expect(UserNameFallback.resolve(environment: ["USER": "bea"], gitUserName: { nil }, loginName: { "root" }) == "bea")
        #expect(UserNameFallback.resolve(environment: ["USER": " \u{7}"], gitUserName: { "\n" }, loginName: { "root" }) == "root")
        #expect(UserNameFallback.resolve(environment: [:], gitUserName: { nil }, loginName: { nil }) == "someone")
        // Cleaned and bounded as every shown name is.
        #expect(UserNameFallback.resolve(environment: [:], gitUserName: { "Ada\u{1b}[31m Lovelace\u{202e}" }, loginName: { nil }) == "Ada[31m Lovelace")
        #expect(UserNameFallback.resolve(environment: [:], gitUserName: { String(repeating: "a", count: 10_000) }, loginName: { nil }).count
                == PeerLink.maximumUserNameLength)
    }

    @Test func gitsUserNameIsReadFromThePersonsConfiguration() throws {
        let home = DaemonProcess.temporaryDirectory("home")
        try "[user]\n\tname = Ada Lovelace\n".write(toFile: home + "/.gitconfig", atomically: true, encoding: .utf8)
        let environment = ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "GIT_CONFIG_NOSYSTEM": "1", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        #expect(UserNameFallback.gitConfigUserName(environment: environment, directory: home) == "Ada Lovelace")
        let empty = DaemonProcess.temporaryDirectory("home")
        #expect(UserNameFallback.gitConfigUserName(environment: environment.merging(["HOME": empty]) { $1 }, directory: empty) == nil)
    }

    /// A real daemon: an editor that sends no name is named by the daemon, from git's
    /// `user.name`, else `$USER`, else the login; the reply says the name, and others see it.
    @Test(arguments: [("git", "Ada Lovelace"), ("user", "bea"), ("login", "")])
    func anEditorWithNoNameIsNamedByTheDaemon(source: String, expected: String) throws {
        let home = DaemonProcess.temporaryDirectory("home")
        if source == "git" { try "[user]\n\tname = Ada Lovelace\n".write(toFile: home + "/.gitconfig", atomically: true, encoding: .utf8) }
        let daemon = try DaemonProcess(arguments: ["--ephemeral"], environment: [
            "HOME": home, "XDG_CONFIG_HOME": home + "/config", "GIT_CONFIG_NOSYSTEM": "1", "USER": source == "login" ? "" : "bea",
        ], directory: home)
        defer { daemon.closeInput(); _ = daemon.waitForExit() }
        let name = source == "login" ? (UserNameFallback.systemLoginName() ?? "someone") : expected
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["user": ["color": "#123456"]]] as JSONValue)
        let reply = daemon.waitFor { $0["id"] == 1 }
        #expect(reply?["result"]?["user"] == ["name": .string(name), "color": "#123456"], "\(String(describing: reply))")
        daemon.send(["jsonrpc": "2.0", "id": 2, "method": "initialize", "params": [:]] as JSONValue)
        #expect(daemon.waitFor { $0["id"] == 2 }?["error"]?["code"] == -32600, "initialize once")
    }

    @Test func anEditorsOwnNameIsKept() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon)
        #expect(ann.initialize(user: "ann")["result"]?["user"]?["name"] == "ann")
        let blank = TestEditor(daemon: daemon)
        #expect(blank.initialize(user: " ")["result"]?["user"]?["name"] == .string(daemon.configuration.userName))
    }

    @Test func theSummaryCountsEditorsDocumentsAndSaysWhoIsWhere() {
        let daemon = ConcurrentEditingTests.makeDaemon()
        let ann = TestEditor(daemon: daemon), bob = TestEditor(daemon: daemon), carl = TestEditor(daemon: daemon)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        carl.initialize(user: "carl")
        ann.open("notes.txt", text: "x\n")
        bob.open("notes.txt", text: "x\n")
        carl.open("plan.txt", text: "y\n")
        let summary = ann.request("quire/status")["result"]?["summary"]
        #expect(summary?["editors"] == 3)
        #expect(summary?["documents"] == 2)
        #expect(summary?["links"] == 0 && summary?["linksUp"] == 0 && summary?["notYetSent"] == 0 && summary?["removedKept"] == 0)
        #expect(summary?["people"] == [["name": "bob", "documents": ["notes.txt"]], ["name": "carl", "documents": ["plan.txt"]]], "\(String(describing: summary))")
    }

    /// Linked daemons: `peer/changed` says how many links are up, and the summary counts them,
    /// says whether the peer has everything, and names the peer's editor where their cursor is.
    @Test func linksUpAndPeersEditorsComeFromTheDaemon() throws {
        let net = PeerTestNetwork()
        let a = net.makeDaemon(100), b = net.makeDaemon(200, user: "bob")
        let ann = TestEditor(daemon: a), bob = TestEditor(daemon: b)
        ann.initialize(user: "ann")
        bob.initialize(user: "bob")
        ann.open("doc", text: "hello\n")
        let wire = try net.link(a, b)
        net.pump([a, b])
        #expect(ann.take("peer/changed").map { $0["params"]?["linksUp"] } == [1])
        bob.open("doc", text: "")
        bob.notify("cursor/update", ["uri": "doc", "epoch": 0, "revision": 0, "selections": [["start": ["line": 0, "character": 1], "end": ["line": 0, "character": 1]]]])
        net.pump([a, b])
        let summary = ann.request("quire/status")["result"]?["summary"]
        #expect(summary?["links"] == 1 && summary?["linksUp"] == 1)
        #expect(summary?["notYetSent"] == 0, "the peer has everything: in sync")
        #expect(summary?["people"] == [["name": "bob", "documents": ["doc"]]], "\(String(describing: summary))")
        net.sever(wire)
        #expect(ann.take("peer/changed").map { $0["params"]?["linksUp"] } == [0])
        #expect(ann.request("quire/status")["result"]?["summary"]?["linksUp"] == 0)
    }
}
