import QuireProject

// Which documents of deleted files the projects no longer need (protocol/decisions/project-tree.md,
// *Forgetting a deleted file's document*): the core forgets one only once every holder has seen the
// delete (`DocumentForgetter`, a forget round); the projects say whether their side still needs it.
extension ProjectService: DeletedFiles {
    /// The project and file of `uri` when it is exactly the document name of a file of an active
    /// folder project's tree (a project of one file brings its one file back under the same
    /// identity, `fileToRevive`, so its documents are never forgotten).
    private func treeFile(ofURI uri: String) -> (SharedProject, FileID)? {
        guard let (project, file) = projectFile(ofURI: uri), project.active, project.file == nil,
              project.tree.knows(file), project.uri(of: file) == uri else { return nil }
        return (project, file)
    }

    func isDeletedFile(_ uri: String) -> Bool {
        guard let (project, file) = treeFile(ofURI: uri) else { return false }
        return project.tree.claimedPath(of: file) == nil
    }

    func reasonToKeep(_ uri: String) -> String? {
        guard let (project, file) = treeFile(ofURI: uri) else { return "it is not the document of a file of a folder project's tree here" }
        if project.tree.claimedPath(of: file) != nil { return "its file is in the tree" }
        // Still on disk (a delete not carried out yet: held under an open buffer, changed since):
        // the file's text may still come back as an edit.
        if project.known[file] != nil { return "its file is still on disk here" }
        if project.passInFlight != nil { return "a disk pass of its project is in flight" }
        return nil
    }

    func forgettableDocuments(limit: Int) -> [String] {
        var found: [String] = []
        for project in projects.values.sorted(by: { $0.key < $1.key }) where project.active && project.file == nil && project.passInFlight == nil {
            for file in project.deletedFiles where project.known[file] == nil {
                let uri = project.uri(of: file)
                guard parts.documents.document(uri) != nil else { continue }
                found.append(uri)
                if found.count >= limit { return found }
            }
        }
        return found
    }
}
