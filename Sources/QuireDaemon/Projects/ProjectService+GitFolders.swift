import QuireProject
import ReplicatingTypes

// A partner's files never make a git repository on this machine's disk, nor change one there
// (`GitRepositoryLook`): git runs commands a repository's `config` names, wherever a person (or
// a shell prompt) runs git. `.git` itself is refused in every project path (`ProjectPath`).
extension ProjectService {
    /// What a disk pass does with a partner's file at `path` (new there, or with new `text`).
    enum GitFolderVerdict: Equatable {
        case write
        /// The tree has a `HEAD` above it whose text is not here yet: looked at again next pass.
        case wait
        /// Not written: why.
        case hold(String)
    }

    /// Whether a pass may write `text` at `path` in `project`: not when the file is a `HEAD`
    /// git would take for a repository's, nor when a folder it is in (the root included) holds
    /// such a `HEAD` in the tree. `verdicts` keeps each folder's answer for the rest of the pass.
    func gitFolderVerdict(_ path: ProjectPath, text: String, in project: SharedProject,
                          verdicts: inout [String: GitFolderVerdict]) -> GitFolderVerdict {
        if GitRepositoryLook.isHeadName(path.name), GitRepositoryLook.looksLikeHead(text) {
            return .hold("it is a HEAD file that would make its folder a git repository, whose config git obeys")
        }
        for folder in [""] + path.ancestors {
            let verdict: GitFolderVerdict
            if let known = verdicts[folder] {
                verdict = known
            } else {
                verdict = headVerdict(in: folder, of: project, besides: path)
                if verdict != .wait { verdicts[folder] = verdict }
            }
            if verdict != .write { return verdict }
        }
        return .write
    }

    /// Whether `folder` of `project` holds, in the tree, a `HEAD` git would take for a
    /// repository's (any other than `path`'s own, which its own text decides). Such a `HEAD` is
    /// the person's own: a partner's is never written (`gitFolderVerdict`).
    private func headVerdict(in folder: String, of project: SharedProject, besides path: ProjectPath) -> GitFolderVerdict {
        guard let head = try? ProjectPath(folder.isEmpty ? "HEAD" : folder + "/HEAD"), head != path,
              let file = project.view.files[head] else { return .write }
        guard let document = parts.documents.document(project.uri(of: file)) else { return .wait }
        // git reads 256 bytes of it: its first two lines hold them unless a line is longer.
        let text = document.text
        let start = text.lineCount > 1 ? text.line(0) + "\n" + text.line(1) : text.line(0)
        guard GitRepositoryLook.looksLikeHead(start) else { return .write }
        return .hold("it is in \(folder.isEmpty ? "the project's folder" : folder), which git takes for a repository (it holds a HEAD that names a branch or commit), and git obeys a repository's config")
    }

    /// A partner's file that would make or change a git repository on disk is not written
    /// (logged once per revision and path); the document stays, shared with the other members.
    func holdGitFolder(_ file: FileID, at path: ProjectPath, why: String, revision: UInt64, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string, limit: 200)) not written: \(DisplayText.clean(why, limit: 300))")
    }
}
