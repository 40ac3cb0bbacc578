// Core/: the composition root and the parts it wires (documents by name, the one path of
// operations, the one end of a read, registries, presence, rounds, rebase, files, tombstones).
// May call: Documents, Storage, ReplicatingTypes, and the sessions only as `EditorEndpoint` and
// `PeerEndpoint` (Ports.swift). Sessions call in through `EditorHost` and `PeerHost`.
import Logging
import QuireProtocol
import ReplicatingTypes

/// The composition root of the daemon: builds the parts, each with one job, and wires them;
/// it holds no rule of its own. Transport (`EditorConnection`, `PeerNetwork`, `DaemonServer`)
/// calls in here; sessions reach the parts through `EditorHost` and `PeerHost`, never this type.
///
/// The core (this folder) owns: documents by name (`DocumentRegistry`), the one path of
/// operations (`OperationRouter`), the one end of a read and release of output (`OutputGate`),
/// editors and links as registries (`SessionRegistry`, `PeerLinks`), and the services: kept
/// views (`ViewKeeper`), the replica IDs local edits are made as (`ReplicaLender`), reopens
/// that wait for the peers (`ReopenWaits`), presence, stability rounds, rebase, file binding,
/// tombstones and snapshots. It may call Documents, Storage and ReplicatingTypes, and the sessions only through
/// `EditorEndpoint` and `PeerEndpoint`.
///
/// Threading: not thread-safe by design. One event loop owns a daemon and calls into it for
/// every connection, so messages are handled one at a time, in arrival order per connection.
public final class Daemon {
    public typealias Configuration = DaemonConfiguration

    public let configuration: Configuration
    let logger: Logger
    /// Where documents are kept across restarts; nil keeps them in memory only.
    public let store: DocumentStore?
    let clocks = DaemonClock()
    let local: LocalIdentity
    let replicas: ReplicaLender
    let sessionRegistry = SessionRegistry()
    let peerLinks: PeerLinks
    let views: ViewKeeper
    let registry: DocumentRegistry
    let tombstones: TombstonePolicy
    let stability: StabilityService
    /// Forgets deleted files' documents once every holder saw the delete (`DocumentForgetter`).
    let forgetter: DocumentForgetter
    let router: OperationRouter
    /// Who may change a project's documents (`ProjectWriteRule`; protocol/decisions/roles.md).
    let writeRule = ProjectWriteRule()
    let files: FileBinder
    let rebaser: Rebaser
    let presence: PresenceService
    let gate: OutputGate
    let snapshots: SnapshotSource
    let lifecycle: SessionLifecycle
    /// Reopens waiting for the configured peers' first catch-up.
    let reopenWaits: ReopenWaits
    /// The projects this daemon shares or joined (`Projects/`).
    let projects: ProjectService
    private let editorHost: EditorServices
    let peerHost: PeerServices
    private let randomBytes: (Int) -> [UInt8]

    /// `n` bytes from the system's secure generator, drawn 8 at a time (one call each, not one
    /// per byte: a project opened draws IDs for thousands of documents and views).
    public static func systemRandomBytes(_ n: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(0, n))
        while bytes.count < n {
            var word = generator.next()
            for _ in 0..<min(8, n - bytes.count) {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return bytes
    }

    /// - Parameter replicaSource: draws the replica IDs local edits are made as when none of
    ///   those already used fits (`LocalReplicas`); inject a counter in tests, a random source
    ///   in the daemon.
    ///   `randomBytes` draws nonces and document IDs (inject a seeded source in tests).
    ///   `store`: the data directory; its documents are loaded now, and the daemon takes its replica ID.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "quire"),
                replicaSource: @escaping () -> ReplicaID = { ReplicaID(UInt64.random(in: 1...UInt64.max)) },
                randomBytes: @escaping (Int) -> [UInt8] = Daemon.systemRandomBytes,
                store: DocumentStore? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.store = store
        self.randomBytes = randomBytes
        let replica = store?.replica ?? replicaSource()
        local = LocalIdentity(replica: replica, identity: store?.identity ?? PeerIdentity(), configuration: configuration)
        peerLinks = PeerLinks(configuration: configuration, logger: logger, clock: clocks, sessions: sessionRegistry)
        views = ViewKeeper(store: store, randomBytes: randomBytes)
        views.dormantViews.detachedBytesLimit = configuration.maximumDetachedViewBytesPerDocument
        views.dormantViews.detachedCountLimit = configuration.maximumDetachedViewsPerDocument
        replicas = ReplicaLender(logger: logger, store: store, mint: replicaSource, sessions: sessionRegistry, views: views)
        registry = DocumentRegistry(configuration: configuration, logger: logger, store: store, replica: replica, clock: clocks,
                                    randomBytes: randomBytes, views: views, sessions: sessionRegistry, links: peerLinks)
        tombstones = TombstonePolicy(logger: logger, sessions: sessionRegistry, views: views)
        let rounds = StabilityRounds()
        stability = StabilityService(rounds: rounds, configuration: configuration, logger: logger, replica: replica, clock: clocks,
                                     documents: registry, sessions: sessionRegistry, links: peerLinks, views: views, tombstones: tombstones)
        forgetter = DocumentForgetter(logger: logger, replica: replica, documents: registry, sessions: sessionRegistry, views: views,
                                      stability: stability)
        router = OperationRouter(configuration: configuration, logger: logger, store: store, sessions: sessionRegistry, links: peerLinks,
                                 views: views, registry: registry, rounds: rounds, writeRule: writeRule)
        files = FileBinder(logger: logger, store: store, operations: router, replicas: replicas)
        projects = ProjectService(.init(logger: logger, store: store, replica: replica, identity: local, replicas: replicas,
                                        documents: registry, sessions: sessionRegistry, links: peerLinks, files: files, sink: router))
        rebaser = Rebaser(logger: logger, store: store, replica: replica, replicas: replicas, sessions: sessionRegistry, files: files,
                          views: views, documents: registry)
        presence = PresenceService(logger: logger, maximumPerLink: configuration.maximumPeerPresencesPerLink, replica: replica, clock: clocks, documents: registry, sessions: sessionRegistry, links: peerLinks)
        gate = OutputGate(store: store, sessions: sessionRegistry)
        snapshots = SnapshotSource(logger: logger, documents: registry, sessions: sessionRegistry, views: views, tombstones: tombstones,
                                   rounds: stability)
        reopenWaits = ReopenWaits(configuration: configuration, logger: logger, clock: clocks, documents: registry, links: peerLinks)
        lifecycle = SessionLifecycle(logger: logger, documents: registry, sessions: sessionRegistry, views: views, presence: presence,
                                     links: peerLinks, gate: gate)
        editorHost = EditorServices(.init(configuration: configuration, logger: logger, identity: local, store: store, replicas: replicas,
                                     sessions: sessionRegistry, links: peerLinks, views: views, documents: registry, router: router,
                                     files: files, presence: presence, lifecycle: lifecycle, gate: gate, rounds: rounds,
                                     projects: projects, writeRule: writeRule))
        peerHost = PeerServices(.init(configuration: configuration, logger: logger, identity: local, replicas: replicas,
                                 sessions: sessionRegistry, links: peerLinks, documents: registry, router: router, presence: presence,
                                 stability: stability, rebaser: rebaser, gate: gate, writeRule: writeRule))
        wire()
        if let store { registry.load(from: store) }
        projects.load()
        replicas.startRecording()
    }

    private func wire() {
        gate.endOfReadSteps = { [unowned self] in
            reopenWaits.peersProgressed()   // a held reopen may go now
            presence.applyQueued()
            for session in sessionRegistry.inOrder { session.sendPendingEdits() }
            presence.sendPending()
            stability.recheckIfEditorsMoved()
        }
        gate.snapshotSource = { [unowned self] id in snapshots.snapshot(ofDocument: id) }
        gate.onStoreFailure = { [unowned self] store in replicas.forgetPool(of: store) }
        reopenWaits.endRead = { [unowned self] in gate.endRead() }
        projects.registerSecret = { [unowned self] secret, scope, derivedKey in try peerLinks.addSecret(secret, scope: scope, derivedKey: derivedKey) }
        projects.registerInvitation = { [unowned self] secret, key in try peerLinks.addInvitation(secret, projectKey: key) }
        projects.unregisterInvitation = { [unowned self] secret, key in peerLinks.removeInvitation(secret, projectKey: key) }
        projects.unregisterSecret = { [unowned self] scope in removePeerSecret(scope: scope) }
        projects.notifyEditors = { [unowned self] notification in
            for session in sessionRegistry.inOrder { (session as? EditorSession)?.send(notification.message) }
        }
        projects.endRead = { [unowned self] in gate.endRead() }
        files.readBoundFile = { [unowned self] path throws(ResponseError) in try projects.readForEditor(path) }
        registry.changes.listen { [unowned self] document in projects.documentChanged(document) }
        projectFrames = projects
        forgetter.deletedFiles = projects
        peerHost.deletedFiles = projects
        stability.isDeletedFile = { [unowned self] uri in projects.isDeletedFile(uri) }
        stability.reasonToKeep = { [unowned self] document in forgetter.reasonToKeep(document) }
        stability.forgetRoundSucceeded = { [unowned self] document in forgetter.roundSucceeded(document) }
        writeRule.access = projects
        writeRule.projectName = { [unowned self] key in projects.projects[key]?.name }
        projects.rolesChanged = { [unowned self] key in projectRolesChanged(key: key) }
        peerLinks.onClosed = { [unowned self] link in
            presence.dropPresence(via: link)
            stability.linkClosed(link)
            if let holder = link.peerReplica, link.wasEstablished { registry.lastLinked(with: holder) }
        }
    }

    // MARK: Editors

    /// A new editor session whose outgoing messages go to `send`.
    public func makeSession(send: @escaping (Message) -> Void) -> EditorSession {
        let session = EditorSession(id: sessionRegistry.takeNextID(), daemon: editorHost, send: send)
        sessionRegistry.add(session)
        logger.info("editor session \(session.id) started")
        return session
    }

    /// Forgets a session whose connection closed; its cursors disappear from other editors.
    public func endSession(_ session: EditorSession) {
        lifecycle.end(session, shutDown: session.state == .shutDown)
    }

    // MARK: Peers

    /// A new link to a peer over a byte stream; call `start()` once the stream is up.
    /// Throws when no secret (or one shorter than `PeerSecret.minimumMaterialBytes`) is
    /// configured, or no handshake slot is free (`PeerLinks.admit`): unauthenticated peering is
    /// never allowed. `incoming`: the peer connected to us (a listener, or `quire peer --stdio`);
    /// this side accepts, and shows nothing that depends on the secret before the peer proved it.
    /// `accepts`: on a link through a relay (one this daemon started, so `incoming` is false and
    /// it takes no incoming handshake slot), the role the relay gave it.
    /// `scope`: the secret the link speaks with (a link this daemon dials: the general one when
    /// nil); on an incoming link nil tries every secret held on the connector's proof.
    /// `secret`: exactly this one of `scope`'s, in either role (an owner's invitation dialed
    /// through a relay); it must be held (member or invitation secret), else this throws.
    public func makePeerLink(write: @escaping ([UInt8]) -> Void, close: @escaping () -> Void, incoming: Bool = true,
                             accepts: Bool? = nil, remoteHost: String? = nil, scope: DocumentScope? = nil,
                             secret: [UInt8]? = nil) throws -> PeerLink {
        try peerLinks.admit(incoming: incoming, remoteHost: remoteHost, scope: scope, secret: secret) { id, secrets in
            PeerLink(id: id, daemon: peerHost, secrets: secrets, nonce: randomBytes(32), incoming: accepts ?? incoming,
                     remoteHost: remoteHost, write: write, close: close)
        }
    }

    // MARK: Secrets and projects (protocol/decisions/project-sharing.md)

    /// What each project's roster allows, for the peer links, the editors and the operation path
    /// (`ProjectWriteRule`): the project service; tests put a stand-in here (held weakly).
    var projectAccess: (any ProjectAccess)? {
        get { writeRule.access }
        set { writeRule.access = newValue }
    }

    /// The project service: it hears of project links and their project frames (kind 12).
    weak var projectFrames: (any ProjectFrames)? {
        get { peerHost.projectFrames }
        set { peerHost.projectFrames = newValue }
    }

    /// Holds `secret` for `scope` from now on: links made with it carry only documents of that
    /// scope (a project's: `@<key>/...`). Throws `PeeringError` when the secret is shorter than
    /// `PeerSecret.minimumMaterialBytes`, is not the secret of the project's key
    /// (`DocumentScope.projectKey(secret:)`), or a 65th project secret would be held.
    public func addPeerSecret(_ secret: [UInt8], scope: DocumentScope) throws {
        try peerLinks.addSecret(secret, scope: scope)
    }

    /// Forgets the secret of `scope`: the transport stops dialing with it, and every link of that
    /// scope closes (a handshake with it under way is refused when it completes).
    public func removePeerSecret(scope: DocumentScope) {
        peerLinks.transport?.disconnect(scope: scope)
        peerLinks.removeSecret(scope: scope)
    }

    /// The secret links of `scope` are made with, if held (for the relay's rendezvous value).
    func peerSecret(of scope: DocumentScope) -> [UInt8]? { peerLinks.secrets.secret(for: scope) }

    /// Whether a secret of `scope` is held.
    public func holdsPeerSecret(of scope: DocumentScope) -> Bool { peerLinks.isHeld(scope) }

    /// Closes every link of `scope` (`PeerTransport.disconnect(scope:)` calls it after stopping
    /// the dialers).
    func closePeerLinks(of scope: DocumentScope, reason: String) { peerLinks.close(scope: scope, reason: reason) }

    /// Heartbeats for every link, queued presence, the failure summary, the rounds' patience and
    /// the forgetting of deleted files' documents; the server calls it every `interval` seconds.
    public func tickPeers(now: Double, interval: Double) {
        peerLinks.tick(now: now, interval: interval)
        presence.applyQueued()
        peerLinks.tellFailureSummary(now: clocks.wall())
        stability.tick()
        forgetter.sweep()
        // A round finished here may have logged sharing records: durable, and its output
        // released, without waiting for a read.
        gate.release()
    }

    /// Closes every peer link (the daemon is exiting).
    public func closeAllPeers() { peerLinks.closeAll() }

    // MARK: Reopens that wait for the peers (`ReopenWaits`)

    /// Makes reopens wait (bounded) for the first catch-up of `configuredPeers` peers from now
    /// on; `schedule` runs work on the daemon's event loop after a delay (seconds); `onLoop` runs
    /// work on it from any thread (given, the projects' disk passes write off the loop).
    public func waitForPeersBeforeReopens(configuredPeers: Int, schedule: @escaping (Double, @escaping () -> Void) -> Void,
                                          onLoop: ((@escaping () -> Void) -> Void)? = nil) {
        reopenWaits.activate(configuredPeers: configuredPeers, schedule: schedule)
        projects.start(schedule: schedule, onLoop: onLoop)
    }

    /// Whether `body`, from `connection`, is held until the peers caught up (`ReopenWaits.holds`).
    func holdsForCatchUp(_ body: [UInt8], from connection: EditorConnection) -> Bool {
        reopenWaits.holds(body, from: connection)
    }

    // MARK: Reads and durability (`OutputGate`)

    /// `write`, held back until what it depends on is durable.
    func gated(_ write: @escaping ([UInt8]) -> Void) -> ([UInt8]) -> Void { gate.gated(write) }

    /// The end of a read from an editor: daemon edits and presence go out once durable.
    public func endRead() { gate.endRead() }

    /// Makes what was logged durable (under `.sync`) and releases the output that waited for it.
    public func commit() { gate.release() }

    /// Makes everything logged so far durable whatever the durability (the `.batch` timer and
    /// shutdown call it), then releases.
    public func syncStorage() { gate.syncStorage() }

    /// Waits for the projects' disk passes writing off the loop and records them (at exit, on
    /// the loop, before the last `syncStorage`).
    public func finishDiskPasses() { projects.settlePasses() }
}
