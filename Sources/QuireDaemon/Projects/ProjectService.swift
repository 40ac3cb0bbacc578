import Foundation
import Logging
import QuireProject
import QuireProtocol
import ReplicatingTypes

/// The projects this daemon shares (`host`) or joined (`joined`), and everything the daemon does
/// for them (protocol/decisions/project-sharing.md): sharing a folder (scan, one document per text
/// file, a secret and a join line), joining from a line, the tree's sync over the project's links
/// (`ProjectFrames`), naming the files editors open, and keeping files and documents in step
/// (`syncDisk`, `scanDisk`).
///
/// Guarantees: a project's secret is registered with the daemon exactly while it is active;
/// every change to a tree is kept (with a store), sent to every established link of the
/// project's scope and never to another; the disk is only written through `ProjectWriter`'s
/// rules (never under an open buffer, never over bytes the daemon did not write or read last).
///
/// Threading: as the daemon, one event loop; only a disk pass's planning and writing run off it
/// (`DiskPassRunner`), on values taken for it, and are recorded back on the loop.
final class ProjectService: ProjectFrames {
    struct Parts {
        let logger: Logger
        let store: DocumentStore?
        let replica: ReplicaID
        let identity: LocalIdentity
        let replicas: ReplicaLender
        let documents: DocumentRegistry
        let sessions: SessionRegistry
        let links: PeerLinks
        let files: FileBinder
        let sink: any OperationSink
    }

    let parts: Parts
    var logger: Logger { parts.logger }
    /// Every project this daemon knows, stopped ones included, by key.
    private(set) var projects: [String: SharedProject] = [:]
    /// Registers a project's secret with the daemon (`Daemon.addPeerSecret`); throws when the
    /// daemon holds as many project secrets as it may. The flag is false for an invitation's
    /// secret a joiner redeems (its key is not derived from it).
    var registerSecret: ([UInt8], DocumentScope, Bool) throws -> Void = { _, _, _ in }
    /// Registers an invitation's secret as an extra secret of project `key`'s scope; throws when
    /// the daemon holds as many as it may (`PeerSecrets.maximumInvitationSecrets`).
    var registerInvitation: ([UInt8], String) throws -> Void = { _, _ in }
    /// Forgets an invitation's secret.
    var unregisterInvitation: ([UInt8], String) -> Void = { _, _ in }
    /// Seconds since 1970 (tests move it): when invitations expire.
    var now: () -> Double = { Double(time(nil)) }
    /// Forgets it (`Daemon.removePeerSecret`).
    var unregisterSecret: (DocumentScope) -> Void = { _ in }
    /// Tells the daemon that project `key`'s roles changed (`Daemon.projectRolesChanged`).
    var rolesChanged: (String) -> Void = { _ in }
    /// Sends a notification to every editor.
    var notifyEditors: (any DaemonNotification) -> Void = { _ in }
    /// Ends a timer pass that changed something as a read ends (`OutputGate.endRead`): what it
    /// logged is made durable and its edits go to editors and peers.
    var endRead: () -> Void = {}
    /// What the daemon writes into a project folder at most, the bounds of what a host may
    /// share (a file of at most `fileBytes`, `totalBytes` of files in all): a partner's larger
    /// document or many documents stay documents and are not written (`ProjectService+Writing`).
    var diskLimits = ProjectScanner.Limits()
    /// Keys a line of many uses admits before it is used up (`ProjectInvitation.maximumUses`;
    /// tests lower it).
    var invitationUseLimit = ProjectInvitation.maximumUses
    /// Runs between the checks of a project file's path and its read or write for an editor's
    /// open or save (tests swap a link in here: neither may go through it).
    var beforeFileAccess: () -> Void = {}
    /// What the daemon said about where it listens when it listened again by itself (at a
    /// restart: the port kept was taken, so partners need a new line), for the next editor that
    /// starts (`takeListeningNotices`); at most `maximumListeningNotices`.
    var listeningNotices: [String] = []
    static let maximumListeningNotices = 8
    /// Counts the disk passes that changed documents, the tree or the disk.
    var passesWithChanges = 0
    /// Runs work on the daemon's event loop after a delay (seconds); nil (tests): the caller
    /// drives `syncDisk` and `scanDisk`.
    private(set) var schedule: ((Double, @escaping () -> Void) -> Void)?
    /// Where the disk passes write (`DiskPassRunner`): off the event loop once the timers run
    /// with a way back onto the loop from another thread (`start(schedule:onLoop:)`); nil
    /// (tests driving passes or a scheduler by hand): on the caller, done when `syncDisk` returns.
    var diskPasses: DiskPassRunner?
    /// Told each durability step of a disk pass's writes, off the loop (tests make a pass fail
    /// part way with it).
    var observePassDisk: (@Sendable (DiskProject.DurabilityStep) -> Void)?
    /// What spaces chained passes (`chainDelay`) reads the time from (`DispatchTime` nanoseconds;
    /// tests run a clock of their own with the scheduler's).
    var passClock: () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    /// How long after a change the disk is written, and how often the folders are re-scanned.
    static let writeDelay = 0.2
    static let rescanInterval = 3.0
    /// The re-scan interval of a project whose every folder is watched (the scan reads the first
    /// block of every file: the watch tells sooner and costs nothing).
    static let watchedRescanInterval = 15.0
    private var ticks = 0

    init(_ parts: Parts) {
        self.parts = parts
    }

    // MARK: Loading and the timers

    /// Loads the projects kept in the data directory; the active ones' secrets are registered.
    func load() {
        guard let store = parts.store else { return }
        for key in ProjectRecordFile.keys(in: store.path) {
            do {
                let project = try ProjectRecordFile(dataDirectory: store.path, key: key).load(replica: parts.replica)
                let wasActive = project.active
                project.active = false   // until its secret is held
                foundRosterIfNeeded(project)
                projects[key] = project
                if wasActive {
                    try activate(project)
                    rebindAliases(into: project)
                }
                logger.info("project \(key) (\(DisplayText.clean(project.name))) loaded: \(project.view.paths.count) files, \(project.role.rawValue)")
            } catch {
                logger.warning("project \(key) in \(store.path)/projects is not loaded: \(DisplayText.clean("\(error)", limit: 300))")
            }
        }
    }

    /// Starts the disk timers: a pass every `writeDelay` seconds (what the watch saw is read,
    /// what changed is written), a re-scan every `rescanInterval` (`watchedRescanInterval` when
    /// every folder is watched).
    /// `onLoop` runs a closure on the event loop from any thread (`EventLoop.execute`: on a loop
    /// that has shut down it runs nothing and leaks nothing); given, the passes write off the loop.
    func start(schedule: @escaping (Double, @escaping () -> Void) -> Void, onLoop: ((@escaping () -> Void) -> Void)? = nil) {
        guard self.schedule == nil else { return }
        self.schedule = schedule
        if diskPasses == nil, let onLoop { diskPasses = DiskPassRunner(toLoop: onLoop) }
        for project in projects.values where project.active { reconnect(project) }
        tick()
    }

    private func tick() {
        ticks &+= 1
        let before = passesWithChanges
        let rescanEvery = max(1, Int(Self.rescanInterval / Self.writeDelay))
        let watchedRescanEvery = max(1, Int(Self.watchedRescanInterval / Self.writeDelay))
        for project in projects.values.sorted(by: { $0.key < $1.key }) where project.active {
            let every = project.watcher?.watchesAll == true ? watchedRescanEvery : rescanEvery
            diskRound(project, rescanDue: ticks % every == 0)
            if project.passInFlight == nil, project.knownDirty, ticks % rescanEvery == 0 { keepTree(project) }
        }
        // A pass that bound a document without changing the disk logged its binding too.
        if passesWithChanges != before || parts.store?.holdsOutput == true { endRead() }
        schedule?(Self.writeDelay) { [weak self] in self?.tick() }
    }

    /// One round of `project`'s disk work: what its watch saw, a scan when one is due, then a
    /// pass; while a pass writes (`passInFlight`), the scan and the next pass wait for it.
    /// Here the watch is read only between passes (a pass reads it as it goes, `ProjectWatcher.drain`):
    /// the events of a pass's new folders are told for its own once it is recorded (`watchWritten`).
    func diskRound(_ project: SharedProject, rescanDue: Bool) {
        if rescanDue { project.needsScan = true }
        guard project.active, project.passInFlight == nil else { return }
        if let watcher = project.watcher, watcher.takeEvents() {
            project.needsScan = true
            logger.debug("project \(project.key): scanning, the watch saw \(watcher.lastChange.map(\.description).joined(separator: ", "))")
        }
        if project.needsScan { scanDisk(project) }
        syncDisk(project)
    }

    /// Registers `project`'s secret, watches its folder and starts the disk work.
    private func activate(_ project: SharedProject) throws {
        try registerSecret(project.secret, project.scope, !project.redeeming)
        for invitation in project.invitations {
            do { try registerInvitation(invitation.secret, project.key) } catch {
                logger.warning("project \(project.key): an invitation's secret is not held: \(DisplayText.clean("\(error)", limit: 200))")
            }
        }
        project.active = true
        if project.watcher == nil { project.watcher = ProjectWatcher(root: project.root, logger: logger) }
        project.watcher?.watch(folders: Set(project.view.paths.values.flatMap(\.ancestors)))
        project.needsScan = true
    }

    /// Listens again where a shared project listened, or dials a joined project's host again
    /// (after a restart).
    private func reconnect(_ project: SharedProject) {
        guard let transport = parts.links.transport else { return }
        do {
            if project.role == .host {
                try dialRelay(project)
                let kept = project.listen
                let notices = try relisten(project, transport: transport)
                // Listening where it did before is nothing to show; a new port means a new line.
                if project.listen != kept { tellEditors(notices) }
            } else {
                try dial(project, transport: transport)
            }
        } catch {
            logger.warning("project \(project.key): cannot reconnect: \(DisplayText.clean("\(error)", limit: 200))")
        }
    }

    // MARK: Keeping records

    func keep(_ project: SharedProject) {
        guard let store = parts.store else { return }
        let file = ProjectRecordFile(dataDirectory: store.path, key: project.key)
        do {
            // The roster first: a record naming a founder is never kept without its changes.
            if let roster = project.roster { try file.saveRoster(roster) }
            try file.save(project)
        } catch {
            logger.error("project \(project.key): cannot keep its record: \(error)")
        }
    }

    func keepTree(_ project: SharedProject) {
        project.treeDirty = false
        project.knownDirty = false
        guard let store = parts.store else { return }
        let file = ProjectRecordFile(dataDirectory: store.path, key: project.key)
        do {
            try file.saveTree(project.tree)
            try file.saveKnown(project)
        } catch {
            logger.error("project \(project.key): cannot keep its tree: \(error)")
        }
    }

    // MARK: Queries

    /// The active project that shares the absolute `path`: a folder project whose root holds it
    /// (the deepest, should roots nest), or the project of one file that is `path`.
    func project(containing path: String) -> SharedProject? {
        projects.values.filter { $0.active && $0.holds(path) }.max { $0.root.utf8.count < $1.root.utf8.count }
    }

    func project(key: String) -> SharedProject? { projects[key] }

    /// The established links of `project`'s scope.
    func links(of project: SharedProject) -> [any PeerEndpoint] {
        parts.links.established.filter { $0.scope == project.scope }
    }

    /// `project/list`.
    func list() -> [ProjectListRequest.Entry] {
        projects.values.filter(\.active).sorted { $0.key < $1.key }.map { project in
            ProjectListRequest.Entry(key: project.key, name: project.name, root: project.root, role: project.role.rawValue,
                                     files: project.view.paths.count, links: links(of: project).count,
                                     file: project.file.map(project.absolute))
        }
    }

    /// `project/stop`: the links of its scope close, its secret goes, disk work stops; its
    /// documents, files and record stay (sharing the root again reuses the secret).
    func stop(key: String) throws(ResponseError) {
        guard let project = projects[key], project.active else {
            throw .invalidParams("params.key: this daemon shares or follows no project \(key)")
        }
        settlePass(project)
        project.active = false
        for port in project.listeningPorts { _ = parts.links.transport?.stopListening(port: port) }
        project.listeningPorts = []
        unregisterSecret(project.scope)   // its dialers stop and its links close
        project.relayDialed = []
        project.watcher = nil
        keep(project)
        keepTree(project)
        logger.info("project \(key) (\(DisplayText.clean(project.name))) stopped")
    }

    /// Adds a new or stopped project and makes it active; throws (-32016), adding nothing, when
    /// the daemon cannot hold its secret.
    func add(_ project: SharedProject) throws(ResponseError) {
        do { try activate(project) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot share or join another project: \(error)")
        }
        projects[project.key] = project
        rebindAliases(into: project)
        keep(project)
    }

    /// Whether `name` can be a project's name: a folder name (join-line.md).
    static func isFolderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= JoinLine.maximumNameBytes && name != "." && name != ".."
            && !name.unicodeScalars.contains { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }
    }
}
