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
}
