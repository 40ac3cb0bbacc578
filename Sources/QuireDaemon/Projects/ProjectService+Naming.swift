import Foundation
import QuireProject

// Files to documents: an editor's `document/open` of a file in a project names the file's
// document by the tree; a path the tree lacks becomes a new file of the project.
extension ProjectService {
    /// The document name of the file at absolute `path` when it lies in an active project (is
    /// the one file of a project of one file) and is not ignored there: its tree file's `@key/fileID`; a path the tree lacks becomes a new
    /// file (a tree create, sent to the project's links; what is on disk there is known as read).
    /// Nil: the file is in no project (or ignored, or cannot be a file of it).
    func documentName(ofFile path: String) -> String? {
        guard let (project, projectPath) = locate(path) else { return nil }
        // What stands there now is checked for a file of the tree too: a link planted on its
        // path since (or another user's file) is not read into the project's document.
        if let file = project.view.files[projectPath] {
            if refusesToTake(projectPath, in: project) { return nil }
            if let why = ignoredTreeFile(file, at: projectPath, in: project) {
                logger.warning("project \(project.key): \(why)")
                return nil
            }
            return project.uri(of: file)
        }
        // A file shared by itself was named on purpose: the folder's ignore files do not apply.
        guard project.file != nil || !isIgnored(projectPath, in: project), project.tree.isFree(projectPath),
              !predatesItsRules(projectPath, in: project) else { return nil }
        guard mayMakeTheFile(of: project), !refusesToTake(projectPath, in: project) else { return nil }
        // What it reads of the disk is not in the middle of a pass's renames (a file moved away).
        settlePass(project)
        if let previous = fileToRevive(in: project), parts.documents.document(project.uri(of: previous)) != nil {
            guard let operation = revive(previous, at: projectPath, text: try? ProjectReader.text(of: projectPath, root: project.root), in: project) else { return nil }
            treeChanged(project, by: [operation])
            return project.uri(of: operation.file)
        }
        let operation: ProjectTree.Operation
        do { operation = try project.tree.create(at: projectPath) } catch {
            logger.warning("project \(project.key): \(DisplayText.clean(projectPath.string)) cannot be added: \(error)")
            return nil
        }
        if let text = try? ProjectReader.text(of: projectPath, root: project.root) {
            project.setKnown(operation.file, ProjectWriter.Wanted(path: projectPath, text: text))
            project.stamps[operation.file] = SharedProject.Stamp.of(project.absolute(projectPath))
        }
        project.watcher?.watch(folders: Set(projectPath.ancestors))
        logger.info("project \(project.key): \(DisplayText.clean(projectPath.string)) opened by an editor becomes file \(operation.file)")
        treeChanged(project, by: [operation])
        return project.uri(of: operation.file)
    }

    /// Why an editor's open of the owner's file at absolute `path` does not join the shared
    /// document a partner made at that path, nil when it does (or `path` is no such file): the
    /// project's ignore files leave the path out (`.env`), so it is outside the share both ways
    /// (`protocol/decisions/project-sharing.md`, *Ignored paths*). Cleaned, for the editor.
    func ignoredTreeFileReason(_ path: String) -> String? {
        guard let (project, projectPath) = locate(path), let file = project.view.files[projectPath] else { return nil }
        return ignoredTreeFile(file, at: projectPath, in: project)
    }

    /// The sentence for `ignoredTreeFileReason`: a file of the tree at `path` that the project's
    /// ignore files leave out, and that this daemon never wrote or read there (a partner made
    /// it; a file the host shared before it was ignored keeps its document).
    func ignoredTreeFile(_ file: FileID, at path: ProjectPath, in project: SharedProject) -> String? {
        guard project.file == nil, project.known[file]?.path != path, isIgnored(path, in: project) else { return nil }
        return "\(DisplayText.clean(path.string)) is ignored by the project \(DisplayText.clean(project.name)) (.gitignore, .quireignore): "
            + "your file there is not shared, and the file a partner made at that path stays apart from it"
    }

    /// Whether an editor's open of `path` may not make it a file of `project`: the scan would
    /// leave out what is there (`ProjectScanner.reasonToLeaveOut`: a link or a special file, or,
    /// in a folder others may write in, another user's file or folder or a hard-linked file), so
    /// what another user put there reaches no member through an editor either. Logged, cleaned.
    func refusesToTake(_ path: ProjectPath, in project: SharedProject) -> Bool {
        guard let reason = ProjectScanner().reasonToLeaveOut(path, root: project.root) else { return false }
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) opened by an editor is not made a file of the project: \(DisplayText.clean(reason.description, limit: 300))")
        return true
    }

    /// Why an editor's `document/save` may not write the file at absolute `path` of an active
    /// project: what the scan would leave out there (`ProjectScanner.reasonToLeaveOut`: a link
    /// on the way or at the path, a special file, or, in a folder others may write in, another
    /// user's folder or file or a hard-linked file), so a save never writes through what was put
    /// there. Nil when it may, or when `path` lies in no project. Logged, cleaned.
    func refusalToWrite(_ path: String) -> String? {
        guard let project = project(containing: path), let relative = project.projectPath(ofAbsolute: path),
              let reason = ProjectScanner().reasonToLeaveOut(relative, root: project.root) else { return nil }
        let why = "\(DisplayText.clean(relative.string)) of the project \(DisplayText.clean(project.name)) is not written: \(reason.description)"
        logger.warning("project \(project.key): \(why)")
        return why
    }

    /// The path an editor's `file` is read, bound and saved by: a file of an active project named
    /// by another path to it (through a link to the root, with `..`) as the project's own path
    /// (root and project path), so its open, its binding's reads and its saves go through the
    /// project's walk from the opened root like the plain path's; any other path as given.
    func editorPath(ofFile path: String) -> String {
        guard let (project, relative) = locate(path) else { return path }
        return project.absolute(relative)
    }

    /// The active project holding `path` and the file's path in it; the path is taken as given,
    /// else with its folder's links resolved (an editor may reach the root through a link).
    private func locate(_ path: String) -> (SharedProject, ProjectPath)? {
        if let project = project(containing: path), let relative = project.projectPath(ofAbsolute: path) { return (project, relative) }
        let folder = (path as NSString).deletingLastPathComponent
        guard let resolved = realpath(folder, nil) else { return nil }
        defer { free(resolved) }
        // A resolved folder that is not UTF-8 would read with U+FFFD: another folder's name.
        guard let folderText = String(validatingCString: resolved) else { return nil }
        let real = folderText + "/" + (path as NSString).lastPathComponent
        guard let project = project(containing: real), let relative = project.projectPath(ofAbsolute: real) else { return nil }
        return (project, relative)
    }

    /// Whether the file at `path` of a joined folder `project`, not a file of the tree, has been
    /// there since before an ignore file on its way (`.gitignore`, `.quireignore`, in its folder
    /// or one above) last changed: it may be a file those rules left out until then (`.env`),
    /// and a joiner writes a partner's change to them, so a partner emptying its copy must not
    /// share the person's ignored files (protocol/decisions/project-sharing.md, *Ignored paths*).
    /// Such a file is not taken, by a scan or an editor's open, until it changes itself. Compared
    /// by status-change time (`st_ctim`, which no program sets back; the same tick of the file
    /// system's clock counts as after, so a file made with its rules is taken); a host decides its own rules.
    func predatesItsRules(_ path: ProjectPath, in project: SharedProject) -> Bool {
        let absolute = project.absolute(path)
        guard project.role == .joined, project.file == nil, let made = Self.statusChanged(absolute) else { return false }
        for folder in [""] + path.ancestors {
            for name in ProjectScanner.ignoreFileNames {
                let rules = project.root + (folder.isEmpty ? "" : "/" + folder) + "/" + name
                if rules == absolute { continue }
                if let changed = Self.statusChanged(rules), changed > made { return true }
            }
        }
        return false
    }

    /// When the status of what is at `path` (not followed) last changed, in nanoseconds.
    private static func statusChanged(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int64(info.st_ctim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_ctim.tv_nsec)
    }

    /// Whether `path` is left out of `project` by its ignore files (`.gitignore`, `.quireignore`
    /// at each level on its way, read as the scan reads them: never through a link, and in a
    /// folder others may write in, not one another user put there) or lies in `.git`.
    func isIgnored(_ path: ProjectPath, in project: SharedProject) -> Bool {
        var lookup = ignoreLookup(in: project)
        return lookup.isIgnored(path)
    }

    /// `isIgnored` for many paths of `project` in one pass, each folder's ignore files read once.
    func ignoreLookup(in project: SharedProject) -> IgnoreLookup {
        IgnoreLookup(scanner: ProjectScanner(limits: diskLimits), root: project.root)
    }
}
