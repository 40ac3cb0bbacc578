import Foundation
import JSON
import Logging
@testable import QuireDaemon
import QuireProject
import QuireProtocol
import QuireTestSupport
import ReplicatingTypes
import Testing

/// A transport that records what the daemon asks of it (no network).
final class RecordingTransport: PeerTransport {
    var listened: [(host: String, port: Int)] = []
    var connected: [(host: String, port: Int, fingerprint: String?, scope: DocumentScope)] = []
    var relays: [(host: String, port: Int, scope: DocumentScope)] = []
    var commands: [(command: String, fingerprint: String?, scope: DocumentScope)] = []
    var disconnected: [DocumentScope] = []
    /// Each dial of alternative addresses (one link wanted), as `host:port`s.
    var dials: [[String]] = []
    /// The scope each listen was for (nil: every secret).
    var listenedScopes: [DocumentScope?] = []
    var stopped: [Int] = []
    /// Ports another program holds: a listen there fails.
    var taken: Set<Int> = []
    private var nextPort = 40_000

    struct PortTaken: Error, CustomStringConvertible {
        var description: String { "Address already in use" }
    }

    func listen(host: String, port: Int) throws -> Int { try listen(host: host, port: port, scope: nil) }

    func listen(host: String, port: Int, scope: DocumentScope?) throws -> Int {
        if taken.contains(port) { throw PortTaken() }
        listenedScopes.append(scope)
        let bound = port == 0 ? nextPort : port
        nextPort += 1
        listened.append((host, bound))
        return bound
    }
    func stopListening(port: Int) -> Bool { stopped.append(port); return true }
    func connect(host: String, port: Int, fingerprint: String?) throws { connected.append((host, port, fingerprint, .general)) }
    func connect(host: String, port: Int, fingerprint: String?, scope: DocumentScope) throws { connected.append((host, port, fingerprint, scope)) }
    func connect(addresses: [(host: String, port: Int)], fingerprint: String?, scope: DocumentScope) throws {
        dials.append(addresses.map { "\($0.host):\($0.port)" })
        for address in addresses { connected.append((address.host, address.port, fingerprint, scope)) }
    }
    func connect(relayHost: String, port: Int, fingerprint: String?) throws { relays.append((relayHost, port, .general)) }
    func connect(relayHost: String, port: Int, fingerprint: String?, scope: DocumentScope) throws { relays.append((relayHost, port, scope)) }
    func connect(command: String, fingerprint: String?) throws {}
    func connect(command: String, fingerprint: String?, scope: DocumentScope) throws { commands.append((command, fingerprint, scope)) }
    func disconnect(scope: DocumentScope) { disconnected.append(scope) }
    var listeningPorts: [Int] { listened.map(\.port) }
}

/// A peer link of a given scope that records the project frames sent on it.
final class RecordingLink: PeerEndpoint {
    let id: Int
    var state: PeerLinkState = .established
    var wasEstablished = true
    var closeReason: String?
    var isIncoming = false
    var remoteHost: String?
    var peerReplica: ReplicaID? = ReplicaID(999)
    var peerUser: String? = "partner"
    var address = "test"
    var peerFingerprint: String?
    var peerKey: [UInt8]?
    var expectedFingerprint: String?
    var isEncrypted = true
    var bytesIn = 0, bytesOut = 0, operationsIn = 0, operationsOut = 0, behind = 0
    var scope: DocumentScope?
    /// The tag of the secret it stands for having been made with (nil: the member secret's).
    var secretTag: String?
    var frames: [(key: String, payload: [UInt8])] = []

    init(id: Int, scope: DocumentScope) {
        self.id = id
        self.scope = scope
    }

    /// The tree operations sent so far, decoded, then forgotten (file format frames are skipped).
    func takeOperations() throws -> [ProjectTree.Operation] {
        defer { frames = [] }
        return try frames.filter { $0.payload.first != ProjectFormats.tag }.flatMap { try ProjectTree.Operation.decode($0.payload) }
    }

    func sendOperations(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], of document: SharedDocument) {}
    func sendPresence(_ message: PresenceMessage) {}
    func sendStability(_ message: JSONValue) {}
    func sendProjectFrame(key: String, payload: [UInt8]) { frames.append((key, payload)) }
    func announce(_ document: SharedDocument) {}
    func sendWhole(_ document: SharedDocument) {}
    func retryRebase(of document: SharedDocument) {}
    func takeQueuedPresence(now: Double) -> [PresenceMessage] { [] }
    func refusedPresence(_ reason: String) {}
    func tick(now: Double, interval: Double) {}
    func sendDueDigests() {}
    func hasCaughtUp(on uri: String) -> Bool { true }
    func cut(_ reason: String) { closeReason = reason; state = .closed }
    func close(_ reason: String) { closeReason = reason; state = .closed }
}

/// Temporary project folders and daemons that share them.
enum ProjectFixture {
    /// The daemon holds its transport weakly: the fixture keeps them for the test run.
    nonisolated(unsafe) private static var transports: [RecordingTransport] = []
    private static let lock = NSLock()
    static func folder(_ files: [String: [UInt8]], name: String = "proj") throws -> String {
        let root = DaemonProcess.temporaryDirectory("projects") + "/" + name
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (path, bytes) in files { try write(bytes, to: root + "/" + path) }
        return root
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A daemon with a recording transport (kept alive by the returned tuple) and, if given, a store.
    static func daemon(_ base: UInt64, store: DocumentStore? = nil) -> (Daemon, RecordingTransport) {
        let daemon = PeerTestNetwork().makeDaemon(base, store: store)
        let transport = RecordingTransport()
        daemon.transport = transport
        lock.withLock { transports.append(transport) }
        return (daemon, transport)
    }

    /// A link of project `key`'s scope, registered with `daemon` as established.
    static func link(to daemon: Daemon, key: String) throws -> RecordingLink {
        try daemon.peerLinks.admit(incoming: false, remoteHost: nil, scope: .project(key: key)) { id, _ in RecordingLink(id: id, scope: .project(key: key)) }
    }

    /// `project/share` of `root` by a new editor of `daemon`.
    static func share(_ daemon: Daemon, root: String, editor: TestEditor? = nil) -> JSONValue {
        let editor = editor ?? { let e = TestEditor(daemon: daemon); e.initialize(); return e }()
        return editor.request("project/share", ["root": .string(root)])
    }
}

/// Work scheduled on the daemon's loop, run when the test says.
final class ManualSchedule {
    private(set) var due: [(delay: Double, work: () -> Void)] = []

    func schedule(_ delay: Double, _ work: @escaping () -> Void) { due.append((delay, work)) }

    /// Runs what is due now (what that schedules waits for the next call).
    func runDue() {
        let work = due
        due = []
        for item in work { item.work() }
    }
}

/// A host (`ann`) sharing `root` and a joiner (`mallory`) of it, each with a test editor, linked
/// over a test wire once the joiner has the project's `a.txt`: how the tests of what a partner's
/// files may do on a daemon's disk begin. Keeps the transports and the wire alive with it.
final class JoinedPair {
    let net = PeerTestNetwork()
    let host: Daemon
    let joiner: Daemon
    let hostEditor: TestEditor
    let joinerEditor: TestEditor
    let key: String
    let root: String
    /// The joiner's copy of the project.
    let copy: String
    private let kept: [Any]

    /// `root` must hold `a.txt` with `a\n`; `name` names the joiner's folder.
    init(root: String, name: String, ports: (host: UInt64, joiner: UInt64), hostLog: LogCapture? = nil, joinerLog: LogCapture? = nil) throws {
        self.root = root
        host = net.makeDaemon(ports.host, log: hostLog)
        joiner = net.makeDaemon(ports.joiner, log: joinerLog)
        let transports = [RecordingTransport(), RecordingTransport()]   // held weakly by the daemons
        host.transport = transports[0]
        joiner.transport = transports[1]
        hostEditor = TestEditor(daemon: host)
        joinerEditor = TestEditor(daemon: joiner)
        hostEditor.initialize(user: "ann")
        joinerEditor.initialize(user: "mallory")
        let reply = hostEditor.request("project/share", ["root": .string(root)])
        let shared = try #require(reply["result"], "\(reply)")
        key = try #require(shared["key"]?.stringValue)
        copy = DaemonProcess.temporaryDirectory(name + "-join") + "/copy"
        _ = joinerEditor.request("project/join", ["line": try #require(shared["line"]), "directory": .string(copy)])
        let wire = try net.link(joiner, host, scope: .project(key: key))
        kept = [transports, wire]
        #expect(settle { ProjectFixture.read(self.copy + "/a.txt") == "a\n" })
    }

    /// `ProjectPeerTests.settle` of the two daemons.
    func settle(_ condition: () -> Bool) -> Bool { ProjectPeerTests.settle(net, [host, joiner], until: condition) }

    /// The joiner's person writes `files` into its copy; the joiner scans them at its next round.
    func writeOnJoiner(_ files: [String: [UInt8]]) throws {
        for (path, bytes) in files { try ProjectFixture.write(bytes, to: copy + "/" + path) }
        for project in joiner.projects.projects.values { project.needsScan = true }
    }
}
