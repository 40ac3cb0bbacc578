import Dispatch
import QuireProject
import ReplicatingTypes

/// What a disk pass did off the event loop (`ProjectService.write`): its plan and, when
/// `DiskProject.perform` stopped part way, why.
struct PassOutcome: Sendable {
    let plan: ProjectWriter.Plan
    var failure: (any Error)?
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
// crash never leaves a recorded file that is not on disk (which would read as a delete).
extension ProjectService {
    /// Records `outcome` of a pass of `project` that wrote `wanted` and knew `known`; `documents`
    /// holds each written file's document and the revision its text came from (the document
    /// may have changed since: that change is written by a later pass).
    func recordPass(_ outcome: PassOutcome, of project: SharedProject, wanted: [FileID: ProjectWriter.Wanted],
                    known: [FileID: ProjectWriter.Wanted], documents: [FileID: WrittenDocument]) {
        if let failure = outcome.failure {
            // What was done stays; the next scan reads what the disk holds now.
            logger.warning("project \(project.key): \(DisplayText.clean("\(failure)", limit: 300))")
            project.needsScan = true
            return
        }
        let plan = outcome.plan
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
                    logger.info("project \(project.key): \(DisplayText.clean(path.string)) not written: \(hold)")
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
        watchWritten(folders, written: outcome.written, in: project)
        if !plan.actions.isEmpty {
            passesWithChanges &+= 1
            logger.info("project \(project.key): \(plan.actions.count) changes written to disk in \(outcome.writeNanoseconds / 1_000_000) ms (planned in \(outcome.planNanoseconds / 1_000_000) ms)")
            logger.debug("project \(project.key): pass recorded at \(DispatchTime.now().uptimeNanoseconds / 1_000_000) ms of uptime")
            project.knownDirty = true
        }
    }
}
