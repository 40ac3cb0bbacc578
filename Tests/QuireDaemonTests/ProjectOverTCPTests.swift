import Foundation
import JSON
import NIOCore
import QuireProject
@testable import QuireDaemon
import QuireTestSupport
import Testing

/// Sharing and joining a project over the real transport (SwiftNIO, `PeerNetwork`), with the
/// service's timers on the daemons' loops: the join line's address, secret and pinned key reach
/// the host, and the joiner's folder fills with the host's files; a change on either disk reaches
/// the other. The joiner holds no general secret, only the project's.
@Suite(.serialized) struct ProjectOverTCPTests {
    typealias Node = ScopedSharingOverTCPTests.Node

    /// Starts `node`'s project timers on its loop.
    static func startTimers(_ node: Node) throws {
        let loop = node.loop
        try node.run { daemon in
            daemon.projects.start { seconds, work in
                loop.scheduleTask(in: .nanoseconds(Int64(max(0, seconds) * 1e9))) { work() }
            }
        }
    }

    @Test func aJoinerOverTCPGetsTheHostsFilesAndChangesGoBothWays() throws {
        let root = try ProjectFixture.folder([
            "README.md": Array("# Over TCP\n".utf8),
            "src/lib.swift": Array("let a = 1\r\n".utf8),
        ], name: "tcp")
        let directory = DaemonProcess.temporaryDirectory("project-tcp") + "/copy"
        let host = try Node(500), joiner = try Node(600, secret: nil)
        defer { for node in [host, joiner] { node.stop() } }
        try Self.startTimers(host)
        try Self.startTimers(joiner)
        let shared = try host.run { daemon in
            let editor = TestEditor(daemon: daemon)
            editor.initialize(user: "ann")
            return editor.request("project/share", ["root": .string(root), "listen": ["127.0.0.1:0"]])
        }
        let line = try #require(shared["result"]?["line"], "\(shared)")
        #expect(shared["result"]?["addresses"]?.arrayValue?.count == 1)
        let joined = try joiner.run { daemon in
            let editor = TestEditor(daemon: daemon)
            editor.initialize(user: "bob")
            return editor.request("project/join", ["line": line, "directory": .string(directory)])
        }
        #expect(joined["result"]?["name"] == "tcp", "\(joined)")
        let expected = ProjectPeerTests.contents(of: root)
        #expect(waitUntil(timeout: 30) { (try? joiner.run { _ in ProjectPeerTests.contents(of: directory) }) == expected },
                "\(ProjectPeerTests.contents(of: directory).keys.sorted())")
        // A change on the joiner's disk reaches the host's (the joiner's watcher, the link, the host's writer).
        try joiner.run { _ in try ProjectFixture.write(Array("# Over TCP\nfrom bob\n".utf8), to: directory + "/README.md") }
        #expect(waitUntil(timeout: 30) { (try? host.run { _ in ProjectFixture.read(root + "/README.md") }) == "# Over TCP\nfrom bob\n" })
        // And a new file on the host's disk reaches the joiner's.
        try host.run { _ in try ProjectFixture.write(Array("new\n".utf8), to: root + "/src/new.swift") }
        #expect(waitUntil(timeout: 30) { (try? joiner.run { _ in ProjectFixture.read(directory + "/src/new.swift") }) == "new\n" })
        let listed = try joiner.run { daemon in daemon.projects.list() }
        #expect(listed.count == 1 && listed.first?.role == "joined" && listed.first?.links == 1, "\(listed)")
    }
}
