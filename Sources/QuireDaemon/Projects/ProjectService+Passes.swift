import QuireProject
import ReplicatingTypes

// What the next disk pass of a project looks at (`SharedProject.passFiles`): the files whose
// document changed or whose editors came or went, told as it happens, so that a pass between
// two scans costs the files that changed, not the project's size.
extension ProjectService {
    /// `document` changed or came (`DocumentChanges`): the next pass looks at its file.
    /// - Complexity: O(1) (the document's name is read once).
    func documentChanged(_ document: SharedDocument) {
        guard let (project, file) = projectFile(ofURI: document.uri) else { return }
        project.passFiles.insert(file)
    }

    /// An editor opened or closed document `uri` (`EditorSession`): a project's file is looked at
    /// again (it may be written once no editor shows it); any other document may be a project's
    /// file opened under another name (`pathsOpenOutsideTheProject`), so every project looks at
    /// all of its files at its next pass.
    /// Either way, the files a pass held because an editor showed their path are tried again
    /// (`releaseHeldOpen`).
    func editorViewsChanged(_ uri: String) {
        if let (project, file) = projectFile(ofURI: uri) {
            project.passFiles.insert(file)
            releaseHeldOpen(project)
        } else if parts.documents.document(uri)?.file != nil {
            for project in projects.values where project.active {
                project.passAll = true
                releaseHeldOpen(project)
            }
        }
    }

    /// The files of `project` held because an editor showed their path (`heldOpen`) are looked
    /// at by the next pass, their hold forgotten: the editor that showed one may have gone (its
    /// hold was remembered per revision and path, so the file waited for the next scan).
    /// - Complexity: O(files held so).
    private func releaseHeldOpen(_ project: SharedProject) {
        guard !project.heldOpen.isEmpty else { return }
        for file in project.heldOpen {
            project.heldAt[file] = nil
            project.passFiles.insert(file)
        }
        project.heldOpen = []
    }

    /// The project and file of a project document's name, `@<key>/<replica>-<serial>` (hex).
    func projectFile(ofURI uri: String) -> (SharedProject, FileID)? {
        guard let key = DocumentScope.projectKey(inURI: uri), let project = projects[key] else { return nil }
        let name = uri.utf8.dropFirst(DocumentScope.projectKeyDigits + 2)
        guard let dash = name.firstIndex(of: UInt8(ascii: "-")),
              let replica = UInt64(String(decoding: name[..<dash], as: UTF8.self), radix: 16),
              let serial = UInt64(String(decoding: name[name.index(after: dash)...], as: UTF8.self), radix: 16) else { return nil }
        return (project, FileID(replica: ReplicaID(replica), serial: serial))
    }
}
