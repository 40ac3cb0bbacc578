import QuireProject
import QuireProtocol
import ReplicatingTypes

// Disk to documents: what changed in a project folder and is not open in an editor becomes
// edits, creates, deletes and renames (`ProjectChanges`), sent to the project's links.
extension ProjectService {
    /// Scans `project`'s folder (or its one file) and takes in what changed since the daemon
    /// last wrote or read it.
    func scanDisk(_ project: SharedProject) {
        settlePass(project)   // what a pass writes is read as its own, not as a change
        project.needsScan = false
        guard project.active else { return }
        do {
            let scan = try scanner(root: project.root, file: project.file)
            logRefusals(in: scan, of: project)
            importScan(scan, into: project)
        } catch {
            logger.warning("project \(project.key): the folder cannot be scanned: \(DisplayText.clean(error.description, limit: 300))")
        }
    }

    /// Logs (once per path and reason, names cleaned) what a scan refused because someone else
    /// may have put it there: links, special files, and in a folder others may write in, another
    /// user's file or folder or a hard-linked file (`FolderTrust`).
    func logRefusals(in scan: ProjectScanner.Result, of project: SharedProject) {
        for left in scan.leftOut {
            switch left.reason {
            case .symbolicLink, .notRegularFile, .anotherUsersFile, .anotherUsersFolder, .hardLinked: break
            default: continue
            }
            let said = left.path + "\u{0}" + left.reason.description
            guard !project.refusalsLogged.contains(said) else { continue }
            if project.refusalsLogged.count >= SharedProject.maximumRefusalsLogged { project.refusalsLogged.removeAll() }
            project.refusalsLogged.insert(said)
            logger.warning("project \(project.key): \(DisplayText.clean(left.path, limit: 300)) is not shared or taken: \(DisplayText.clean(left.reason.description, limit: 300))")
        }
    }

    /// Takes in the files `scan` found: a file read is checked against what was last written or
    /// read by its size, time and inode before its text is read again.
    func importScan(_ scan: ProjectScanner.Result, into project: SharedProject) {
        // Every folder walked, empty ones too: a file made in a folder that held none was found
        // only by the next rescan (15 s) when only the folders of files were watched. Last, so
        // that the folders of files (`record`) take the watches first when they run short.
        defer { project.watcher?.watch(folders: Set(scan.folders)) }
        project.heldAt = [:]
        project.passAll = true   // every held file is tried again
        let view = project.view
        var openPaths: Set<ProjectPath> = []
        var known: [FileID: ProjectWriter.Wanted] = [:]
        // A file of the project that has gained a hard link (in a folder others may write in) is
        // held as it was: not read (a link in may be another file's), not taken for deleted
        // (which would delete it at every member).
        let linked = Set(scan.leftOut.compactMap { left -> String? in
            if case .hardLinked = left.reason { return left.path }
            return nil
        })
        for (file, last) in project.known {
            if let document = parts.documents.document(project.uri(of: file)), parts.sessions.isOpen(document) {
                openPaths.insert(last.path)
                if let path = view.paths[file] { openPaths.insert(path) }
            } else if linked.contains(last.path.string) {
                continue
            } else {
                known[file] = last
            }
        }
        for (path, file) in view.files where project.known[file] == nil {
            // A file of the tree not on disk yet (its document has not arrived): what stands at
            // its path is not taken for a new file.
            openPaths.insert(path)
        }
        var disk: [ProjectPath: String] = [:]
        for shared in scan.files where !openPaths.contains(shared.path) {
            if let file = view.files[shared.path], let last = project.known[file], last.path == shared.path,
               let stamp = project.stamps[file], SharedProject.Stamp.of(project.absolute(shared.path)) == stamp {
                disk[shared.path] = last.text
                continue
            }
            if let text = try? ProjectReader.text(of: shared.path, root: project.root) { disk[shared.path] = text }
        }
        let changes = ProjectChanges.between(known: known, disk: disk)
        guard !changes.isEmpty else { return }
        passesWithChanges &+= 1
        var operations: [ProjectTree.Operation] = []
        for (file, text) in changes.edits.sorted(by: { $0.key < $1.key }) {
            readEdit(of: file, text: text, in: project)
            // A file the tree deleted that was changed on disk meanwhile (saved from a buffer
            // still open) comes back at its path, with everything in it (project-tree.md).
            if view.paths[file] == nil, let path = project.known[file]?.path, project.tree.isFree(path),
               let operation = try? project.tree.move(file, to: path) {
                operations.append(operation)
            }
        }
        for (file, path) in changes.renames.sorted(by: { $0.key < $1.key }) {
            do { operations += try project.tree.move(file, replacing: path) } catch {
                logger.warning("project \(project.key): a rename to \(DisplayText.clean(path.string)) is not taken: \(error)")
                continue
            }
            record(file, at: path, text: known[file]?.text ?? "", in: project)
        }
        for file in changes.deletes.sorted() {
            if let operation = try? project.tree.delete(file) { operations.append(operation) }
            project.setKnown(file, nil)
            project.stamps[file] = nil
            project.writtenRevisions[file] = nil
        }
        operations += readCreates(changes.creates, into: project)
        logger.info("project \(project.key): read from disk: \(changes.edits.count) edits, \(changes.creates.count) new files, \(changes.deletes.count) deletes, \(changes.renames.count) renames")
        project.knownDirty = true
        if !operations.isEmpty { treeChanged(project, by: operations) }
    }

    /// Takes note that `file` is at `path` on disk with `text`, as the daemon read it, and binds
    /// its document there.
    func record(_ file: FileID, at path: ProjectPath, text: String, in project: SharedProject) {
        project.setKnown(file, ProjectWriter.Wanted(path: path, text: text))
        project.stamps[file] = SharedProject.Stamp.of(project.absolute(path))
        project.watcher?.watch(folders: Set(path.ancestors))
        guard let document = parts.documents.document(project.uri(of: file)) else { return }
        if document.file?.path != project.absolute(path) {
            try? parts.files.bind(document, toFile: project.absolute(path), content: Array(text.utf8), writtenByEditor: true)
        }
        // The writer compares the document with what is on disk now (it may hold more).
        project.writtenRevisions[file] = nil
    }

    /// A file changed on disk: what changed since the daemon last wrote or read it goes into its
    /// document as an edit from outside (`FileBinder`, through the operation path).
    private func readEdit(of file: FileID, text: String, in project: SharedProject) {
        guard let path = project.known[file]?.path else { return }
        guard let document = parts.documents.document(project.uri(of: file)) else {
            record(file, at: path, text: text, in: project)
            return
        }
        do {
            if document.file?.path != project.absolute(path), let last = project.known[file] {
                try parts.files.bind(document, toFile: project.absolute(path), content: Array(last.text.utf8), writtenByEditor: true)
            }
            // What the scan read (walked from the root without following links), not the path again.
            try parts.files.mergeOutsideChanges(of: document, content: Array(text.utf8))
        } catch {
            logger.warning("project \(project.key): the change to \(DisplayText.clean(path.string)) is not taken in: \(error.message)")
            return
        }
        record(file, at: path, text: text, in: project)
    }

    /// New files on disk: a tree create each (in path order), and a document holding its text,
    /// bound to it. The documents' files are kept together (one sync, `DocumentStore.create`).
    private func readCreates(_ creates: [ProjectPath: String], into project: SharedProject) -> [ProjectTree.Operation] {
        var operations: [ProjectTree.Operation] = []
        for (path, text) in creates.sorted(by: { $0.key < $1.key }) {
            guard project.tree.isFree(path), mayMakeTheFile(of: project) else { continue }
            if predatesItsRules(path, in: project) {
                logger.warning("project \(project.key): \(DisplayText.clean(path.string)) is not shared: it was there before the ignore files on its way changed (it may be a file they left out); it is shared once it changes")
                continue
            }
            if let previous = fileToRevive(in: project), parts.documents.document(project.uri(of: previous)) != nil {
                if let operation = revive(previous, at: path, text: text, in: project) { operations.append(operation) }
                continue
            }
            let operation: ProjectTree.Operation
            do { operation = try project.tree.create(at: path) } catch {
                logger.warning("project \(project.key): \(DisplayText.clean(path.string)) is not added: \(error)")
                continue
            }
            operations.append(operation)
            let bytes = Array(text.utf8)
            let decoded = FileFormat.decode(bytes)
            var created: SharedDocument?
            do {
                let (document, isNew) = try parts.documents.openDocument(project.uri(of: operation.file)) {
                    ReplicatingText(decoded?.text ?? text, replica: parts.replicas.pool.pick(forEditing: nil, of: ReplicatingText(replica: ReplicaID(0)), avoiding: []))
                }
                try parts.files.bind(document, toFile: project.absolute(path), content: bytes, writtenByEditor: false)
                if isNew { created = document }   // one held already may hold other text
            } catch {
                logger.warning("project \(project.key): \(DisplayText.clean(path.string)) has no document: \(error.message)")
            }
            record(operation.file, at: path, text: text, in: project)
            // A new document made from the file's decoded text writes those very bytes back (the
            // format round-trips UTF-8), so the next pass has nothing to compare for it: sharing
            // 2,000 files no longer re-encodes, re-checks and re-binds each one at the first tick,
            // while a partner's join waits for the event loop.
            if decoded != nil, let created, created.file?.path == project.absolute(path) {
                project.writtenRevisions[operation.file] = created.revision
            }
        }
        return operations
    }
}
