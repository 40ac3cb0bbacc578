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
        if let file = project.view.files[projectPath] { return project.uri(of: file) }
        // A file shared by itself was named on purpose: the folder's ignore files do not apply.
        guard project.file != nil || !isIgnored(projectPath, in: project), project.tree.isFree(projectPath) else { return nil }
        guard mayMakeTheFile(of: project), !holdsAnotherUsersFile(project) else { return nil }
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

    /// The active project holding `path` and the file's path in it; the path is taken as given,
    /// else with its folder's links resolved (an editor may reach the root through a link).
    private func locate(_ path: String) -> (SharedProject, ProjectPath)? {
        if let project = project(containing: path), let relative = project.projectPath(ofAbsolute: path) { return (project, relative) }
        let folder = (path as NSString).deletingLastPathComponent
        guard let resolved = realpath(folder, nil) else { return nil }
        defer { free(resolved) }
        let real = String(cString: resolved) + "/" + (path as NSString).lastPathComponent
        guard let project = project(containing: real), let relative = project.projectPath(ofAbsolute: real) else { return nil }
        return (project, relative)
    }

    /// Whether `path` is left out of `project` by its ignore files (`.gitignore`, `.quireignore`
    /// at each level on its way, as the scan reads them) or lies in `.git`.
    func isIgnored(_ path: ProjectPath, in project: SharedProject) -> Bool {
        if path.components.contains(".git") { return true }
        var rules = IgnoreRules()
        let folders = [""] + path.ancestors
        for (index, folder) in folders.enumerated() {
            if index > 0, rules.isIgnored(folder, isDirectory: true) { return true }
            var files: [IgnoreFile] = []
            for name in ProjectScanner.ignoreFileNames {
                let file = project.root + (folder.isEmpty ? "" : "/" + folder) + "/" + name
                guard let size = FileSystem.size(file), size <= ProjectScanner.Limits().ignoreFileBytes,
                      let bytes = try? FileSystem.readUserFile(file), let ignore = try? IgnoreFile(contents: bytes) else { continue }
                files.append(ignore)
            }
            rules = rules.adding(folder: folder, files: files)
        }
        return rules.isIgnored(path.string, isDirectory: false)
    }
}
