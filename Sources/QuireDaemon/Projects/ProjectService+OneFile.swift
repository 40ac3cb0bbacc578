import Foundation
import QuireProject
import QuireProtocol

// A file shared by itself is a project of one file (protocol/decisions/roles.md, *A file shared
// by itself*): its folder is the project's root, its tree holds that file only, and the scan, the
// watch, the writer and the naming of an editor's files see nothing else of the folder. Everything
// else (secret, join line, roster, invitations, enforcement) is a project's.
extension ProjectService {
    /// The folder and name of the regular file at `path` (absolute, links resolved) shared by
    /// itself; throws when it cannot be: a file at `/`, or a name a project cannot carry.
    func oneFile(_ path: String) throws(ResponseError) -> (root: String, file: ProjectPath) {
        let root = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard root != "/", !root.isEmpty else {
            throw .invalidParams("params.root: \(DisplayText.clean(path, limit: 200)) lies at the root of the file system; a file shared by itself lies in a folder")
        }
        guard Self.isFolderName(name), let file = try? ProjectPath(name) else {
            throw .invalidParams("params.root: the name of \(DisplayText.clean(path, limit: 200)) cannot name a project (1 to \(JoinLine.maximumNameBytes) bytes, no control character, not .git); rename it to share it by itself")
        }
        return (root, file)
    }

    /// Refuses, naming the other project, a share that would give one file two documents: a
    /// file that lies in an active project (a folder shared or joined, or the same file shared
    /// by itself from a joined copy), or a folder that holds a file an active project shares by
    /// itself. Sharing again what is shared already (the same folder, the same file) is not an
    /// overlap: it gives the same project.
    func refuseOverlap(root: String, file: ProjectPath?) throws(ResponseError) {
        if let file {
            let path = root + "/" + file.string
            guard let other = project(containing: path), !(other.role == .host && other.root == root && other.file == file) else { return }
            let how = other.role == .joined ? "joined from another daemon" : "shared from this daemon"
            let what = other.file == nil ? "lies in the folder \(DisplayText.clean(other.root, limit: 200)) of the project \(DisplayText.clean(other.name))"
                : "is the file of the project \(DisplayText.clean(other.name))"
            throw .invalidParams("params.root: \(DisplayText.clean(path, limit: 200)) \(what), \(how); its roles and members apply to it there (stop that project to share the file by itself)")
        }
        let holding = projects.values.filter { $0.active && $0.file != nil && $0.shared.hasPrefix(root + "/") }
        if let other = holding.min(by: { $0.shared < $1.shared }) {
            throw .invalidParams("params.root: \(DisplayText.clean(root, limit: 200)) holds \(DisplayText.clean(other.shared, limit: 200)), shared by itself as the project \(DisplayText.clean(other.name)) (\(other.role == .joined ? "joined from another daemon" : "shared from this daemon")); stop that project to share the folder")
        }
    }

    /// What `project/share` shares of `root`: its scan, or, for a file shared by itself, that
    /// file, which must be text (a binary, too large, special file or link is refused, naming why).
    func scanToShare(root: String, file: ProjectPath?) throws(ResponseError) -> ProjectScanner.Result {
        let scan: ProjectScanner.Result
        do { scan = try scanner(root: root, file: file) } catch {
            throw ResponseError(code: ResponseError.unavailableCode, message: "Cannot share \(DisplayText.clean(root + (file.map { "/" + $0.string } ?? ""), limit: 200)): \(error)")
        }
        if let file, scan.files.map(\.path) != [file] {
            let why = scan.leftOut.first?.reason.description ?? "it is not there"
            throw .invalidParams("params.root: \(DisplayText.clean(root + "/" + file.string, limit: 200)) cannot be shared: \(why); a file shared by itself is a text file")
        }
        return scan
    }

    /// The scan of a project's folder, or of its one file.
    func scanner(root: String, file: ProjectPath?) throws(ProjectScanner.Failure) -> ProjectScanner.Result {
        if let file { return try ProjectScanner().scan(root: root, file: file) }
        return try ProjectScanner().scan(root: root)
    }

    // MARK: One file, one identity

    /// Whether this daemon may make the one file of `project` appear (a scan that finds it, an
    /// editor that opens it): always for a folder project or a host; a joiner only once its
    /// host's tree came (or was kept), so a file made before would not claim the path beside the
    /// host's and hide it.
    func mayMakeTheFile(of project: SharedProject) -> Bool {
        project.file == nil || project.role == .host || project.treeHeard || project.tree.fileCount > 0
    }

    /// Whether the one file of `project` on disk is another user's that its scan leaves out
    /// (`ProjectScanner.Reason.anotherUsersFile`): an editor's open does not make it the
    /// project's either, so what they put reaches no member.
    func holdsAnotherUsersFile(_ project: SharedProject) -> Bool {
        guard let file = project.file, let scan = try? scanner(root: project.root, file: file) else { return false }
        return scan.leftOut.contains { if case .anotherUsersFile = $0.reason { true } else { false } }
    }

    /// The deleted file a project of one file brings back instead of making another (the newest
    /// deleted; nil for a folder project or a tree with none): the tree then never holds two
    /// files at its one path, where one would hide the other, and both sides re-creating the
    /// file at once bring back the same file (one register, one document).
    func fileToRevive(in project: SharedProject) -> FileID? {
        guard project.file != nil else { return nil }
        return project.tree.operations.filter { $0.path == nil }.max { $0.timestamp < $1.timestamp }?.file
    }

    /// Brings `file` back at `path` with the text `text` on disk (nil: nothing there yet): its
    /// document (when here) takes the disk's text as a change from outside, so what it held
    /// before merges as any edit would. Nil when the tree refuses (logged).
    func revive(_ file: FileID, at path: ProjectPath, text: String?, in project: SharedProject) -> ProjectTree.Operation? {
        let operation: ProjectTree.Operation
        do { operation = try project.tree.move(file, to: path) } catch {
            logger.warning("project \(project.key): \(DisplayText.clean(path.string)) cannot come back: \(error)")
            return nil
        }
        guard let text else { return operation }
        let absolute = project.absolute(path)
        if let document = parts.documents.document(project.uri(of: file)) {
            do {
                if document.file?.path != absolute {
                    try parts.files.bind(document, toFile: absolute, content: Array(document.text.string.utf8), writtenByEditor: true)
                }
                try parts.files.mergeOutsideChanges(of: document, content: Array(text.utf8))
            } catch {
                logger.warning("project \(project.key): the text of \(DisplayText.clean(path.string)) is not taken in: \(error.message)")
            }
        }
        record(file, at: path, text: text, in: project)
        logger.info("project \(project.key): \(DisplayText.clean(path.string)) is back as file \(file)")
        return operation
    }
}

extension SharedProject {
    /// Whether a peer's tree operation may be applied: any for a folder project; for a project
    /// of one file, only one that puts a file at that file's path or deletes one. No honest
    /// daemon sends another (its scan, its editors and its revivals name that path only). Taken,
    /// a move would take the file off every disk, and a claim under the file's name would make
    /// that name a folder of the tree: the file would show nowhere, leave every disk and never
    /// come back, with nothing any member sees to undo it.
    func takes(_ operation: ProjectTree.Operation) -> Bool {
        guard let file, let path = operation.path else { return true }
        return path == file
    }
}
