import Foundation
import JSON
import Logging
import NIOCore
import NIOPosix
@testable import QuireDaemon
import QuireProject
import QuireTestSupport

/// A daemon with a data directory, a real network transport (SwiftNIO on loopback) and the
/// project service's timers on its own event loop, plus one editor: a member of a project in
/// the roles tests (protocol/decisions/roles.md). Everything runs on the node's loop (`run`).
final class RosterNode: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop: EventLoop
    let daemon: Daemon
    let transport: PeerNetwork
    let log = LogCapture()
    let data: String
    let user: String
    private var editorBox: TestEditor?

    /// `data`: the data directory (kept between runs: a restart is a new node on it).
    init(_ base: UInt64, user: String, data: String? = nil) throws {
        self.user = user
        self.data = data ?? DaemonProcess.temporaryDirectory("roster-\(user)") + "/data"
        loop = group.next()
        let store = try DocumentStore(path: self.data, durability: .batch, logger: Logger(label: "test"))
        daemon = PeerTestNetwork().makeDaemon(base, secret: nil, user: user, store: store, log: log) { $0.userNameIsExplicit = true }
        transport = PeerNetwork(daemon: daemon, group: group, logger: log.logger)
        let (daemon, transport, loop) = (self.daemon, self.transport, self.loop)
        editorBox = try loop.submit {
            daemon.transport = transport
            daemon.projects.start { seconds, work in
                loop.scheduleTask(in: .nanoseconds(Int64(max(0, seconds) * 1e9))) { work() }
            }
            let editor = TestEditor(daemon: daemon)
            editor.initialize(user: user)
            return editor
        }.wait()
    }

    /// Runs `body` on the daemon's loop.
    func run<T>(_ body: @escaping (Daemon) throws -> T) throws -> T {
        let daemon = self.daemon
        return try loop.submit { try body(daemon) }.wait()
    }

    /// A request from this node's editor; its reply.
    func request(_ method: String, _ params: JSONValue) -> JSONValue {
        (try? loop.submit { [self] in editorBox?.request(method, params) ?? .null }.wait()) ?? .null
    }

    /// The notifications `method` this node's editor got so far (taken).
    func take(_ method: String) -> [JSONValue] {
        (try? loop.submit { [self] in editorBox?.take(method) ?? [] }.wait()) ?? []
    }

    /// Shares `root`, listening on loopback; the reply's result.
    func share(_ root: String) throws -> JSONValue {
        let reply = request("project/share", ["root": .string(root), "listen": ["127.0.0.1:0"]])
        guard let result = reply["result"] else { throw RosterTestError("share: \(reply)") }
        return result
    }

    /// Joins from `line` into a new folder; the reply.
    func join(_ line: JSONValue) -> JSONValue {
        request("project/join", ["line": line, "directory": .string(DaemonProcess.temporaryDirectory("roster-join-\(user)") + "/copy")])
    }

    /// Project `key` here, read on the loop.
    func project<T>(_ key: String, _ body: @escaping (SharedProject?) -> T) -> T? {
        try? run { daemon in body(daemon.projects.project(key: key)) }
    }

    func roster(_ key: String) -> ProjectRoster? { project(key) { $0?.roster } ?? nil }

    func ownRole(_ key: String) -> ProjectRole? { (try? run { $0.projects.ownRole(inProject: key) }) ?? nil }

    /// The role this node's roster gives `other`'s key.
    func role(of other: RosterNode, in key: String) -> ProjectRole? {
        let peerKey = other.publicKey
        return (try? run { $0.projects.role(ofPeerKey: peerKey, inProject: key) }) ?? nil
    }

    var publicKey: [UInt8] { daemon.identity.publicKey }

    /// The ids of the established links of project `key`'s scope.
    func links(_ key: String) -> [Int] {
        (try? run { $0.links.values.filter { $0.isEstablished && $0.scope == .project(key: key) }.map(\.id).sorted() }) ?? []
    }

    private var stopped = false

    /// Stops the network and the loop (once).
    func stop() {
        guard !stopped else { return }
        stopped = true
        let transport = self.transport
        _ = try? loop.submit { transport.shutdown() }.wait()
        try? group.syncShutdownGracefully()
    }

    /// This node's data directory copied (what a restart finds: the store's lock is this run's,
    /// so the copy stands for the directory after the process ended).
    func copyOfData() throws -> String {
        let copy = DaemonProcess.temporaryDirectory("roster-\(user)-restarted") + "/data"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: data, toPath: copy)
        try? FileManager.default.removeItem(atPath: copy + "/lock")
        return copy
    }
}

struct RosterTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
