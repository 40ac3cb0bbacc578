import Dispatch
import QuireProject
import ReplicatingTypes

/// What a disk pass did off the event loop (`ProjectService.write`): its plan and, when
/// `DiskProject.performReporting` stopped part way, why and how far it got.
struct PassOutcome: Sendable {
    let plan: ProjectWriter.Plan
    var failure: (any Error)?
    /// How many of the plan's actions, from the first, are done and durable.
    var done = 0
    /// The files written, as synced.
    var written: [ProjectPath: DiskProject.WrittenFile] = [:]
    /// How long planning, then writing took (for the log).
    var planNanoseconds: UInt64 = 0
    var writeNanoseconds: UInt64 = 0
}

/// A document a disk pass writes, as the pass took it: the revision and text its file gets (the
/// document may change while the pass writes; that change is written by a later pass).
struct WrittenDocument {
    let document: SharedDocument
    let revision: UInt64
    let text: ReplicatingText
}

// Recording a disk pass on the event loop once its writes are durable (`DiskProject.perform`
// returned): what is on disk now (`known`, stamps, revisions written), what was held and why, and
// the documents' bindings. Nothing of a pass is recorded before its renames are durable, so a
// crash never leaves a recorded file that is not on disk (which would read as a delete). A pass
// that failed part way records what it did before the failure (durable too), and nothing of the
// rest: its own files must not read later as someone's edit (merged a second time).
extension ProjectService {
    /// Records `outcome` of a pass of `project` that wrote `wanted` and knew `known`; `documents`
    /// holds each written file's document and the revision its text came from (the document
    /// may have changed since: that change is written by a later pass).
    func recordPass(_ outcome: PassOutcome, of project: SharedProject, wanted: [FileID: ProjectWriter.Wanted],
                    known: [FileID: ProjectWriter.Wanted], documents: [FileID: WrittenDocument]) {
        var plan = outcome.plan
        // Files of which some action was not done: what of them reached the disk is recorded,
        // nothing more (their text is written by a later pass: the scan below looks at every file).
        var unfinished: Set<FileID> = []
        if let failure = outcome.failure {
            // The next scan reads what the disk holds now; what was done is recorded here.
            logger.warning("project \(project.key): \(DisplayText.clean("\(failure)", limit: 300)) (\(outcome.done) of \(plan.actions.count) changes done)")
            project.needsScan = true
            guard outcome.done > 0 else { return }
            (plan.known, unfinished) = Self.reached(plan, done: outcome.done, wanted: wanted, known: known)
            plan.actions = Array(plan.actions[..<outcome.done])
        }
        // What is marked for the next pass stays as it is: this pass's own files are known to it
        // (`setKnown` marks them), a change made while it wrote stays marked.
        let marked = project.passFiles
        defer { project.passFiles = marked }
        var folders: Set<String> = []
        for file in Set(wanted.keys).union(known.keys) {
            if let hold = plan.held[file] {
                if hold == .changedOnDisk { project.needsScan = true }
                if hold == .openInEditor { project.heldOpen.insert(file) }
                if let written = documents[file], let path = wanted[file]?.path {
                    project.heldAt[file] = (written.revision, path)
                    if hold == .repository {
                        logger.warning("project \(project.key): \(DisplayText.clean(path.string, limit: 200)) not written: it would make or change a version-control repository (a git HEAD that names a branch or commit, a file in a folder that holds one, or one in \(RepositoryFolders.names.joined(separator: ", "))), whose configuration can name commands to run")
                    } else {
                        logger.info("project \(project.key): \(DisplayText.clean(path.string)) not written: \(hold)")
                    }
                }
                continue
            }
            if unfinished.contains(file) {
                // Moved part way (through a temporary name): known where it is now, its binding
                // and hold left for the pass that finishes it.
                if let now = plan.known[file], now != project.known[file] {
                    project.setKnown(file, now)
                    project.stamps[file] = SharedProject.Stamp.of(project.absolute(now.path))
                    folders.formUnion(now.path.ancestors)
                }
                continue
            }
            project.heldAt[file] = nil
            project.heldOpen.remove(file)
            guard let now = plan.known[file] else {
                project.setKnown(file, nil)
                project.stamps[file] = nil
                project.writtenRevisions[file] = nil
                continue
            }
            project.setKnown(file, now)
            // A file written: as it was synced, so that a change made since it was renamed into
            // place (before this record) still shows; a file moved or found: as it is now.
            project.stamps[file] = outcome.written[now.path].map(SharedProject.Stamp.init) ?? SharedProject.Stamp.of(project.absolute(now.path))
            folders.formUnion(now.path.ancestors)
            if let written = documents[file] {
                project.writtenRevisions[file] = written.revision
                // The file holds the document's text then: a later change to it merges from here.
                try? parts.files.bind(written.document, toFile: project.absolute(now.path), content: Array(now.text.utf8), writtenByEditor: true,
                                      holding: written.text)
            }
        }
        var moved: Set<ProjectPath> = []
        for case .rename(_, let to) in plan.actions { moved.insert(to) }
        watchWritten(folders, written: outcome.written, moved: moved, in: project)
        if !plan.actions.isEmpty {
            passesWithChanges &+= 1
            logger.info("project \(project.key): \(plan.actions.count) changes written to disk in \(outcome.writeNanoseconds / 1_000_000) ms (planned in \(outcome.planNanoseconds / 1_000_000) ms)")
            logger.debug("project \(project.key): pass recorded at \(DispatchTime.now().uptimeNanoseconds / 1_000_000) ms of uptime")
            project.knownDirty = true
        }
    }

    /// What the files of `plan` are on disk once its first `done` actions are carried out (a
    /// pass that failed there): a file with no action is as the plan found it, a file whose
    /// actions were all done as the plan leaves it, and a file with an action not done as its
    /// done actions left it (`known` before the pass when none was); those last are returned as
    /// unfinished.
    /// - Complexity: O(files + actions).
    static func reached(_ plan: ProjectWriter.Plan, done: Int, wanted: [FileID: ProjectWriter.Wanted],
                        known: [FileID: ProjectWriter.Wanted]) -> (known: [FileID: ProjectWriter.Wanted], unfinished: Set<FileID>) {
        var current = known
        var at: [ProjectPath: FileID] = [:]
        for (file, entry) in known { at[entry.path] = file }
        var wantedAt: [ProjectPath: FileID] = [:]
        for (file, entry) in wanted { wantedAt[entry.path] = file }
        var acted: Set<FileID> = []
        var unfinished: Set<FileID> = []
        for (index, action) in plan.actions.enumerated() {
            let file: FileID?
            switch action {
            case .remove(let path), .rename(from: let path, to: _): file = at[path]
            case .write(let path, _): file = wantedAt[path]
            case .removeFolderIfEmpty: file = nil
            }
            guard let file else { continue }
            acted.insert(file)
            guard index < done else {
                unfinished.insert(file)
                continue
            }
            switch action {
            case .remove(let path):
                at[path] = nil
                current[file] = nil
            case .rename(let from, let to):
                at[from] = nil
                at[to] = file
                current[file]?.path = to
            case .write(let path, let text):
                if let old = current[file]?.path, at[old] == file { at[old] = nil }
                at[path] = file
                current[file] = ProjectWriter.Wanted(path: path, text: text)
            case .removeFolderIfEmpty: break
            }
        }
        var reached = plan.known
        for file in acted { reached[file] = current[file] }
        return (reached, unfinished)
    }
}
