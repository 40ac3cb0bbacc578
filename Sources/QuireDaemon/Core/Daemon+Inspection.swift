import JSON
import QuireProtocol
import ReplicatingTypes

/// What the server, the benchmarks and the tests read or move on a daemon, forwarded to the
/// part that owns it.
extension Daemon {
    /// This daemon's own identity towards peers.
    public var replica: ReplicaID { local.replica }
    /// The key that signs this daemon's peer handshakes (kept in the data directory).
    public var identity: PeerIdentity { local.identity }
    /// The name peers are shown for this daemon: `--user-name`, else the first editor's user.
    public var userName: String { local.userName }
    /// Listening and connecting for `peer/*` requests; set by the server that runs the daemon.
    public var transport: PeerTransport? {
        get { peerLinks.transport }
        set { peerLinks.transport = newValue }
    }
    /// Seconds since 1970 (wall clock; tests move it): when holders were last linked with.
    public var clock: () -> Double {
        get { clocks.wall }
        set { clocks.wall = newValue }
    }
    /// Seconds on a monotonic clock (tests move it): rates.
    public var monotonicClock: () -> Double {
        get { clocks.monotonic }
        set { clocks.monotonic = newValue }
    }

    /// How many documents the daemon holds (for the benchmark).
    public var documentCount: Int { registry.documents.count }
    var documents: [String: SharedDocument] { registry.documents }
    func document(_ uri: String) -> SharedDocument? { registry.document(uri) }
    var sessions: [Int: any EditorEndpoint] { sessionRegistry.sessions }
    var links: [Int: any PeerEndpoint] { peerLinks.links }
    /// The live links (for benchmarks and status).
    public var linksForBenchmark: [PeerLink] { peerLinks.inOrder.compactMap { $0 as? PeerLink } }
    var dormantViews: DormantViews { views.dormantViews }
    /// The replica IDs local edits are made as (`LocalReplicas`).
    var localReplicas: LocalReplicas { replicas.pool }
    var stabilityRounds: StabilityRounds { stability.stabilityRounds }

    /// The end-of-read steps without the release (tests that look between the two).
    public func flush() { gate.endOfReadSteps() }

    @discardableResult
    func startStabilityRound(_ document: SharedDocument) -> Bool { stability.startRound(document) }
    func dropTombstones(of document: SharedDocument) { tombstones.dropTombstones(of: document) }
    func tickStabilityRounds() { stability.tick() }
}

extension Daemon {
    /// The bytes of the file `path` to bind (`FileBinder.readFile`); kept here under its old
    /// name for `EditorSession`.
    static func readFile(_ path: String) throws(ResponseError) -> [UInt8]? { try FileBinder.readFile(path) }
}
