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
    func editorViewsChanged(_ uri: String) {
        if let (project, file) = projectFile(ofURI: uri) {
            project.passFiles.insert(file)
        } else if parts.documents.document(uri)?.file != nil {
            for project in projects.values where project.active { project.passAll = true }
        }
    }

    /// The project and file of a project document's name, `@<key>/<replica>-<serial>` (hex).
    private func projectFile(ofURI uri: String) -> (SharedProject, FileID)? {
        guard let key = DocumentScope.projectKey(inURI: uri), let project = projects[key] else { return nil }
        let name = uri.utf8.dropFirst(DocumentScope.projectKeyDigits + 2)
        guard let dash = name.firstIndex(of: UInt8(ascii: "-")),
              let replica = UInt64(String(decoding: name[..<dash], as: UTF8.self), radix: 16),
              let serial = UInt64(String(decoding: name[name.index(after: dash)...], as: UTF8.self), radix: 16) else { return nil }
        return (project, FileID(replica: ReplicaID(replica), serial: serial))
    }
}
