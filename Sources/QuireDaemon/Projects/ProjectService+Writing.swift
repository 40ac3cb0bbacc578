import Dispatch
import QuireProject
import QuireProtocol
import ReplicatingTypes

// Documents to disk: a project file no editor has open is written shortly after its document
// changes or the tree moves it, through `ProjectWriter`'s rules (protocol/decisions/project-tree.md,
// *Writing to disk*); peer traffic only ever reaches the disk this way.
extension ProjectService {
    /// Brings every active project's folder up to date (`syncDisk(_:)`).
    func syncDisk() {
        for project in projects.values.sorted(by: { $0.key < $1.key }) where project.active { syncDisk(project) }
    }

    /// Writes, moves and removes the files of `project` whose document changed, whose tree path
    /// moved, or that the tree deleted, unless an editor has them open; a file changed on disk
    /// since the daemon last wrote or read it is held and read first (`needsScan`).
    /// While a pass of the project writes off the loop (`passInFlight`), none starts: what
    /// changes meanwhile stays marked (`passFiles`) for the pass after it.
    func syncDisk(_ project: SharedProject) {
        guard project.active, project.passInFlight == nil else { return }
        let view = project.view
        var wanted: [FileID: ProjectWriter.Wanted] = [:]
        var known: [FileID: ProjectWriter.Wanted] = [:]
        var open: Set<ProjectPath> = []
        var documentsByFile: [FileID: WrittenDocument] = [:]
        let links = parts.links.established.filter { $0.scope == project.scope }
        var bytesOnDisk = project.knownBytes
        var ignored = ignoreLookup(in: project)
        // The folders of what is on disk, made when a file goes to a new path (`foldersPastBound`).
        var folders: Set<String>?
        // Every file after a change of the tree or a scan, else those whose inputs changed.
        let all = project.passAll
        let looked = all ? Set(view.paths.keys) : project.passFiles
        let candidates = all ? Array(view.paths) : looked.compactMap { file in view.paths[file].map { (file, $0) } }
        // How many of the files looked at are on disk at their path in the tree.
        func writtenCount() -> Int {
            let view = project.view
            return looked.filter { file in view.paths[file].map { project.known[file]?.path == $0 } ?? false }.count
        }
        let writtenBefore = all ? 0 : writtenCount()
        project.passAll = false
        project.passFiles = []
        project.lastPassLooked = candidates.count
        for (file, path) in candidates {
            guard let document = parts.documents.document(project.uri(of: file)) else {
                project.passFiles.insert(file)   // not here yet: looked at again until it is
                continue
            }
            // Its text is still on the way: written once it is, never empty first.
            guard links.isEmpty || links.contains(where: { $0.hasCaughtUp(on: document.uri) }) else {
                project.passFiles.insert(file)
                continue
            }
            let last = project.known[file]
            if parts.sessions.isOpen(document) {
                open.insert(path)
                if let last { open.insert(last.path) }
                continue
            }
            guard last == nil || last?.path != path || project.writtenRevisions[file] != document.revision else { continue }
            if let hold = project.heldAt[file], hold.revision == document.revision, hold.path == path { continue }
            let format = document.file?.format ?? project.formats[file] ?? .plain
            let text = format.encodedText(document.text.string)
            if project.role == .host, project.file == nil, Self.decidesSharing(path) || last.map({ Self.decidesSharing($0.path) }) == true,
               last?.path != path || last?.text != text {
                holdSharingFile(file, at: path, revision: document.revision, in: project)
                continue
            }
            // A joiner writes a partner's rules (what its scan would take since is judged by
            // `predatesItsRules`), but does not move its ignore file away: that un-ignores what
            // no later change of an ignore file on the way marks (`IgnoreFileRelayTests`).
            if project.role == .joined, project.file == nil, let last, Self.decidesSharing(last.path), last.path != path {
                holdSharingFile(file, at: path, revision: document.revision, in: project)
                continue
            }
            // On a joiner too: a program of the person's that later writes its own `.env` there
            // must not write into a partner's shared document (`IgnoredPathJoinerTests`).
            if project.file == nil, last?.path != path, ignored.isIgnored(path) {
                holdIgnored(file, at: path, revision: document.revision, in: project)
                continue
            }
            // A partner's name that would reorder or control what shows it (`misleadingName`) is
            // not made on disk; one this daemon already has there (its own file) stays written.
            if last?.path != path, let why = Self.misleadingName(path) {
                holdMisleading(file, at: path, why: why, revision: document.revision, in: project)
                continue
            }
            if last?.path != path {
                var known = folders ?? Set(project.known.values.flatMap(\.path.ancestors))
                defer { folders = known }
                let added = path.ancestors.filter { !known.contains($0) }
                if known.count + added.count > diskLimits.files {
                    holdFolders(file, at: path, revision: document.revision, in: project)
                    continue
                }
                known.formUnion(added)
            }
            let grown = bytesOnDisk - (last?.text.utf8.count ?? 0) + text.utf8.count
            if text.utf8.count > diskLimits.fileBytes || grown > diskLimits.totalBytes {
                holdOversized(file, at: path, revision: document.revision, bytes: text.utf8.count, in: project)
                continue
            }
            bytesOnDisk = grown
            wanted[file] = ProjectWriter.Wanted(path: path, text: text)
            documentsByFile[file] = WrittenDocument(document: document, revision: document.revision, text: document.text)
            if let last { known[file] = last }
        }
        for file in all ? Array(project.known.keys) : Array(looked) where view.paths[file] == nil {
            guard let last = project.known[file] else { continue }
            if let document = parts.documents.document(project.uri(of: file)), parts.sessions.isOpen(document) {
                open.insert(last.path)
                continue
            }
            // An ignore file is not removed because of a peer (a host's: its own rules; a
            // joiner's: removing it would un-ignore the person's files, `predatesItsRules`).
            if project.file == nil, Self.decidesSharing(last.path) { continue }
            known[file] = last
        }
        // Once the pass's writing is done and recorded (at once when nothing is to be written).
        let finish = { [self] in
            if project.treeDirty || (project.knownDirty && schedule == nil) { keepTree(project) }
            // The count written moves only with the tree, a scan (both look at every file) or what
            // this pass wrote of the files it looked at.
            if all || project.lastProgress == nil || writtenCount() != writtenBefore {
                reportProgress(project, view: project.view)
            }
            holdOwnFilesWhileJoining(project, links: parts.links.established.filter { $0.scope == project.scope })
        }
        project.lastPassWanted = wanted.count
        guard !wanted.isEmpty || !known.isEmpty else { return finish() }
        open.formUnion(pathsOpenOutsideTheProject(in: project))
        // What this pass writes or holds of them is known to it: not looked at again for that
        // (a change while it writes marks the file again, for the next pass).
        project.passFiles.subtract(wanted.keys)
        project.passFiles.subtract(known.keys)
        write(project, wanted: wanted, known: known, open: open, documents: documentsByFile, then: finish)
    }

    /// While a joined project's files are still arriving (some not on disk, the last one
    /// written less than `joinHoldNanoseconds` ago), or while a host sends a project's documents
    /// in bulk to a peer that joined (a link behind by `bulkBehindElements` or more, for at most
    /// `bulkSendHoldNanoseconds`, and once more for `joinHoldRenewalSeconds` when the send ends:
    /// the peer is still writing what it got), the store's own-files maker waits: its thousands of inodes and
    /// syncs would share the disk with the join, which the person is waiting for (the documents
    /// are durable in their packs meanwhile). A join that stalls (a file held for good, a peer
    /// that never says it has everything) lets it go after that long.
    private func holdOwnFilesWhileJoining(_ project: SharedProject, links: [any PeerEndpoint]) {
        let now = DispatchTime.now().uptimeNanoseconds
        var joining = false
        if project.role == .joined {
            if let progress = project.lastProgress, progress.written < progress.files {
                joining = now &- project.lastProgressAt < Self.joinHoldNanoseconds
            }
        } else if links.contains(where: { $0.behind >= Self.bulkBehindElements }) {
            let since = project.bulkSendSince ?? now
            project.bulkSendSince = since
            joining = now &- since < Self.bulkSendHoldNanoseconds
        } else if project.bulkSendSince != nil {
            // The send just ended, but the peer is still taking in and writing what was sent:
            // the maker waits once more, not renewed (on loopback both share the disk).
            project.bulkSendSince = nil
            joining = true
        }
        if joining { parts.store?.deferOwnFiles(seconds: Self.joinHoldRenewalSeconds) }
    }

    /// How long after a joined project's last file landed the maker may wait for the rest.
    static let joinHoldNanoseconds: UInt64 = 10_000_000_000
    /// A link this far behind is a join's bulk transfer, not typing (a 2,000-file project is
    /// some 20 million elements).
    static let bulkBehindElements = 100_000
    /// How long a host's bulk send may hold the maker.
    static let bulkSendHoldNanoseconds: UInt64 = 30_000_000_000

    /// How long each pass of a join holds the maker (renewed at the next pass; longer than a
    /// slow pass, so the maker does not start in the middle of the join).
    static let joinHoldRenewalSeconds = 5.0

    /// Plans and carries out the pass's writes (`ProjectWriter`, `DiskProject.perform`) off the
    /// event loop when the daemon runs (`diskPasses`), then records what was done on the loop
    /// (`recordPass`) and runs `finish`. The project has no other pass meanwhile, and no scan,
    /// editor read or save of its files, or stop, before this one is recorded (`settlePass`).
    private func write(_ project: SharedProject, wanted: [FileID: ProjectWriter.Wanted], known: [FileID: ProjectWriter.Wanted],
                       open: Set<ProjectPath>, documents: [FileID: WrittenDocument],
                       then finish: @escaping () -> Void) {
        var passDisk = DiskProject(root: project.root)
        passDisk.forPass = true   // the folder watch takes its temporary files' events for its own
        passDisk.observeDurability = observePassDisk
        // The watch's queue is read as the pass goes (a long pass would overflow it), and the
        // pass's own removals and moves are told to it beforehand.
        let watcher = project.watcher
        if let watcher { passDisk.betweenGroups = { watcher.drain() } }
        let disk = passDisk   // a copy the work closure takes (not a captured var)
        // The store's own-files maker waits: its inodes and syncs would share the disk with these.
        let maker = parts.store?.maker
        let work: @Sendable () -> PassOutcome = {
            let started = DispatchTime.now().uptimeNanoseconds
            let plan = ProjectWriter.plan(wanted: wanted, known: known, open: open, disk: disk)
            var outcome = PassOutcome(plan: plan, failure: nil)
            outcome.planNanoseconds = DispatchTime.now().uptimeNanoseconds &- started
            watcher?.expect(plan.actions)
            let performed = maker.map { maker in maker.holdWhile { disk.performReporting(plan.actions) } } ?? disk.performReporting(plan.actions)
            watcher?.passDone()
            outcome.failure = performed.failure
            outcome.done = performed.done
            outcome.written = performed.written
            outcome.writeNanoseconds = DispatchTime.now().uptimeNanoseconds &- started &- outcome.planNanoseconds
            return outcome
        }
        let record = { [self] (outcome: PassOutcome) in
            recordPass(outcome, of: project, wanted: wanted, known: known, documents: documents)
            finish()
        }
        guard let diskPasses else { return record(work()) }
        let startedAt = passClock()
        project.passInFlight = diskPasses.run(work) { [self] outcome in
            project.passInFlight = nil
            let before = passesWithChanges
            record(outcome)
            // Next on the loop (not inside a `settlePass`, whose caller goes on with the disk):
            // what it logged (the files' bindings) is made durable as a timer pass's is, and
            // what arrived while it wrote is written by a chained pass, not at the next tick.
            let changed = passesWithChanges != before
            schedule?(0) { [weak self] in
                guard let self, changed || parts.store?.holdsOutput == true else { return }
                endRead()
            }
            schedule?(Self.chainDelay(sinceStart: passClock() &- startedAt)) { [weak self] in
                guard let self, project.passInFlight == nil, project.passAll || !project.passFiles.isEmpty else { return }
                diskRound(project, rescanDue: false)
            }
        }
    }

    /// How long after a pass is recorded, `sinceStart` nanoseconds after it started, the pass
    /// chained to it starts: once `chainInterval` has passed since the first one started. A
    /// slow pass (the disk is what the join waits for) is followed at once, so the disk never
    /// idles; quick small passes are spaced, so a burst of arriving documents (a join) is
    /// written by a few passes of many files, each paying one final sync, not by one pass per
    /// few files. A lone change goes by the timer's pass (`writeDelay`), which does not wait;
    /// one made while a pass writes waits at most `chainInterval` more.
    static func chainDelay(sinceStart nanoseconds: UInt64) -> Double {
        let interval = UInt64(chainInterval * 1e9)
        return nanoseconds >= interval ? 0 : Double(interval - nanoseconds) / 1e9
    }

    /// The least time between the starts of two chained passes (seconds).
    static let chainInterval = 0.05

    /// Finishes `project`'s pass in flight now, if there is one (waiting for its writing): before
    /// anything that reads or writes its files or its record on the loop.
    func settlePass(_ project: SharedProject) {
        guard let pending = project.passInFlight, let diskPasses else { return }
        diskPasses.settle(pending)
    }

    /// Finishes every project's pass in flight (the daemon's exit, before the store's last
    /// commit): a pass whose renames are done but whose hop back never runs on the stopped loop
    /// leaves its files bound to older text, and the next start merges them in a second time.
    func settlePasses() {
        for project in projects.values.sorted(by: { $0.key < $1.key }) { settlePass(project) }
    }

    /// `project/progress` for a joined project whose files are not all on disk yet, and once
    /// when they are.
    private func reportProgress(_ project: SharedProject, view: ProjectView) {
        guard project.role == .joined else { return }
        var written = 0, bytes = 0
        for (file, path) in view.paths {
            guard let known = project.known[file], known.path == path else { continue }
            written += 1
            bytes += known.text.utf8.count
        }
        let now = (files: view.paths.count, written: written)
        guard project.lastProgress.map({ $0.files != now.files || $0.written != now.written }) ?? (now.files > 0 || project.treeHeard) else { return }
        project.lastProgress = now
        project.lastProgressAt = DispatchTime.now().uptimeNanoseconds
        notifyEditors(ProjectProgressNotification(key: project.key, name: project.name, files: now.files, written: written, bytes: bytes))
    }
}
