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

    @Test func aJoinLinesAddressesAreAlternativesOneLinkIsMade() throws {
        let project = try ScopedSharingTests.project()
        let projectDocument = DocumentScope.projectURI(key: project.key, file: "f-1")
        let host = try Node(400, secret: nil, projects: [project.secret])
        let joiner = try Node(500, secret: nil, projects: [project.secret])
        defer { for node in [host, joiner] { node.stop() } }
        try host.open(projectDocument, text: "project text\n")
        let port = try host.run { _ in try host.transport.listen(host: "127.0.0.1", port: 0) }
        // A port nothing listens on: bound, then closed.
        let closed = try host.run { _ in try host.transport.listen(host: "127.0.0.1", port: 0) }
        _ = try host.run { _ in host.transport.stopListening(port: closed) }
        // As a join line lists them: an address that does not answer first, then the host twice
        // (loopback and another name for it).
        let addresses = [(host: "127.0.0.1", port: closed), (host: "127.0.0.1", port: port), (host: "localhost", port: port)]
        try joiner.run { _ in try joiner.transport.connect(addresses: addresses, fingerprint: nil, scope: .project(key: project.key)) }
        #expect(waitUntil { joiner.text(projectDocument) == "project text\n" })
        // Every address was in play: still one link on each side once the dial settled.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(joiner.scopes() == [.project(key: project.key)], "\(joiner.scopes())")
        #expect(host.scopes() == [.project(key: project.key)], "\(host.scopes())")
        // The host goes away and comes back on the same port: the joiner finds it again through
        // the same list, still with one link.
        _ = try host.run { _ in host.transport.stopListening(port: port) }
        try host.run { daemon in for link in daemon.links.values { link.close("test: host restarts") } }
        #expect(waitUntil { joiner.scopes().isEmpty })
        _ = try host.run { _ in try host.transport.listen(host: "127.0.0.1", port: port) }
        #expect(waitUntil(timeout: 15) { joiner.scopes() == [.project(key: project.key)] }, "\(joiner.scopes())")
        #expect(host.scopes() == [.project(key: project.key)])
    }

    @Test func aProjectsListenerTakesOnlyThatProjectsSecret() throws {
        let project = try ScopedSharingTests.project(), other = try ScopedSharingTests.project()
        let host = try Node(600, projects: [project.secret, other.secret])
        let generalPeer = try Node(700)
        let otherPeer = try Node(800, secret: nil, projects: [other.secret])
        let partner = try Node(900, secret: nil, projects: [project.secret])
        defer { for node in [host, generalPeer, otherPeer, partner] { node.stop() } }
        try host.open("notes", text: "general text\n")
        let port = try host.run { _ in try host.transport.listen(host: "127.0.0.1", port: 0, scope: .project(key: project.key)) }
        try generalPeer.run { _ in try generalPeer.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil) }
        try otherPeer.run { _ in try otherPeer.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: other.key)) }
        try partner.run { _ in try partner.transport.connect(host: "127.0.0.1", port: port, fingerprint: nil, scope: .project(key: project.key)) }
        #expect(waitUntil { partner.scopes() == [.project(key: project.key)] })
        // The other two proved secrets the host holds, but not the one this port is for.
        #expect(waitUntil { generalPeer.log.all.contains { $0.contains("authentication failed") } && otherPeer.log.all.contains { $0.contains("authentication failed") } },
                "\(generalPeer.log.all.suffix(3)) \(otherPeer.log.all.suffix(3))")
        #expect(generalPeer.scopes().isEmpty && otherPeer.scopes().isEmpty)
        #expect(generalPeer.documentNames().isEmpty, "the general document never left through the project's port")
        #expect(host.scopes() == [.project(key: project.key)])
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
