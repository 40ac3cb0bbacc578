import Foundation
import JSON
import Logging
import NIOCore
import NIOPosix
@testable import QuireDaemon
import QuireTestSupport
import Testing

/// Scoped sharing over the real transport (SwiftNIO, `PeerNetwork`): a daemon dials with a
/// project's secret over TCP and through a real `quire relay` (whose rendezvous comes from that
/// secret), the accepting side finds the scope, each link carries only its scope's documents, and
/// `disconnect(scope:)` closes that scope's links and stops their reconnects.
@Suite(.serialized) struct ScopedSharingOverTCPTests {
    /// A daemon on its own event loop with the real transport; used on that loop only.
    final class Node: @unchecked Sendable {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop: EventLoop
        let daemon: Daemon
        let transport: PeerNetwork
        let log = LogCapture()

        init(_ base: UInt64, secret: String? = PeerTestNetwork.secret, projects: [[UInt8]] = []) throws {
            loop = group.next()
            daemon = PeerTestNetwork().makeDaemon(base, secret: secret, log: log)
            transport = PeerNetwork(daemon: daemon, group: group, logger: log.logger)
            let (daemon, transport) = (self.daemon, self.transport)
            try loop.submit {
                daemon.transport = transport
                for project in projects { try daemon.addPeerSecret(project, scope: .project(key: DocumentScope.projectKey(secret: project))) }
            }.wait()
        }

        /// Runs `body` on the daemon's loop.
        func run<T>(_ body: @escaping (Daemon) throws -> T) throws -> T {
            let daemon = self.daemon
            return try loop.submit { try body(daemon) }.wait()
        }

        /// Opens `uri` with `text` in a new editor session of this daemon.
        func open(_ uri: String, text: String) throws {
            _ = try run { daemon in
                let editor = TestEditor(daemon: daemon)
                editor.initialize(user: "ann")
                editor.open(uri, text: text)
                return editor.uri
            }
        }

        func text(_ uri: String) -> String? { (try? run { $0.document(uri)?.text.string }) ?? nil }

        func documentNames() -> [String] { (try? run { $0.documents.keys.sorted() }) ?? [] }

        /// The established links' scopes, by link id.
        func scopes() -> [DocumentScope?] {
            (try? run { $0.links.values.filter(\.isEstablished).sorted { $0.id < $1.id }.map(\.scope) }) ?? []
        }

        func stop() {
            let transport = self.transport
            _ = try? loop.submit { transport.shutdown() }.wait()
            try? group.syncShutdownGracefully()
        }
    }

    @Test func aProjectLinkOverTCPCarriesOnlyTheProjectAndDisconnectingItsScopeStopsIt() throws {
        let project = try ScopedSharingTests.project()
        let projectDocument = DocumentScope.projectURI(key: project.key, file: "f-1")
        let a = try Node(100, projects: [project.secret])
        let b = try Node(200)
        let c = try Node(300, secret: nil, projects: [project.secret])
        defer { for node in [a, b, c] { node.stop() } }
        try a.open("notes", text: "general text\n")
        try a.open(projectDocument, text: "project text\n")
        let port = try a.run { _ in try a.transport.listen(host: "127.0.0.1", port: 0) }
        try b.run { _ in try b.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil) }
        try c.run { _ in try c.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: project.key)) }
        #expect(waitUntil { b.text("notes") == "general text\n" && c.text(projectDocument) == "project text\n" })
        #expect(waitUntil { Set(a.scopes().compactMap { $0 }) == [.general, .project(key: project.key)] }, "\(a.scopes())")
        #expect(b.documentNames() == ["notes"] && c.documentNames() == [projectDocument], "neither heard of the other scope")

        // Dialing with a secret not held is refused at once.
        #expect(throws: PeeringError.self) {
            try c.run { _ in try c.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: "00000000000000aa")) }
        }

        // C stops following the project: its link closes, and it does not dial again.
        try c.run { _ in c.transport.disconnect(scope: .project(key: project.key)) }
        #expect(waitUntil { a.scopes() == [.general] }, "only B's general link is left: \(a.scopes())")
        #expect(try c.run { $0.links.isEmpty })
        #expect(c.log.all.contains { $0.contains("closed: no longer shared") }, "\(c.log.all)")
        #expect(!c.log.all.contains { $0.contains("reconnecting") }, "no reconnect was scheduled: \(c.log.all.filter { $0.contains("reconnect") })")
    }

    @Test func twoDaemonsMeetAtARelayWithAProjectsSecretOnly() throws {
        let project = try ScopedSharingTests.project()
        let projectDocument = DocumentScope.projectURI(key: project.key, file: "f-2")
        let (relay, port) = try RelayProcessTests.relay()
        defer { RelayProcessTests.stop(relay) }
        let a = try Node(100, projects: [project.secret])
        let c = try Node(300, secret: nil, projects: [project.secret])
        defer { for node in [a, c] { node.stop() } }
        try a.open("notes", text: "general text\n")
        try a.open(projectDocument, text: "through the relay\n")
        // A dials the relay with the project's rendezvous; C too (it has no general secret at all).
        try a.run { _ in try a.transport.connect(relayHost: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: project.key)) }
        try c.run { _ in try c.transport.connect(relayHost: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: project.key)) }
        #expect(waitUntil { c.text(projectDocument) == "through the relay\n" }, "\(c.documentNames())")
        #expect(a.scopes() == [.project(key: project.key)] && c.scopes() == [.project(key: project.key)])
        #expect(c.documentNames() == [projectDocument], "the general document stayed home")
        #expect(throws: PeeringError.self) {
            try c.run { _ in try c.transport.connect(relayHost: "127.0.0.1", port: port, fingerprint: nil) }
        }
    }
}
