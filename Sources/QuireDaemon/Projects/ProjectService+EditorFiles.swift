import QuireProject
import QuireProtocol

// An editor's `document/open` and `document/save` of a file of an active project: read and
// written through the project's descriptor walk (`DiskProject`), as scans and peer writes are,
// never by path, so nothing swapped onto the path after its checks is read or written through.
extension ProjectService {
    /// The bytes of the file at absolute `path` for an editor's `document/open`, nil when nothing
    /// is there: a file of an active project read through the walk from its opened root (no link
    /// followed at any step, `FolderTrust` applied), any other by path (`FileBinder.readFile`,
    /// which refuses a link at the path itself). Throws -32011 saying why it cannot be read.
    func readForEditor(_ path: String) throws(ResponseError) -> [UInt8]? {
        guard let project = project(containing: path), let relative = project.projectPath(ofAbsolute: path) else {
            return try FileBinder.readFile(path)
        }
        settlePass(project)
        beforeFileAccess()
        do { return try editorDisk(of: project).bytes(at: relative) } catch {
            throw ResponseError(code: ResponseError.unavailableCode,
                                message: "Cannot read \(DisplayText.clean(path, limit: 200)): \(refused(relative, in: project, error, "read"))")
        }
    }

    /// The project's folder as an editor's open and save reach it: files up to the size a file
    /// of no project is read to (`FileBinder.maximumFileBytes`, past which no document holds it;
    /// the project's own bounds apply to what it shares and writes for peers).
    private func editorDisk(of project: SharedProject) -> DiskProject {
        var disk = DiskProject(root: project.root)
        disk.maximumTextBytes = FileBinder.maximumFileBytes
        return disk
    }

    /// Saves `document`, bound to the absolute `path`, when `path` is a file of an active project:
    /// what changed in the file outside Quire is merged from the bytes read by walking from the
    /// opened root with no link followed, then the document's text (in the file's format) is
    /// written the same way (temporary file, fsync, rename, folder fsync), so a folder swapped
    /// for a link at any moment of the save is neither read nor written through; `FolderTrust`
    /// refuses what another user put in a folder others may write in. Returns nil when `path`
    /// lies in no active project (the caller saves by path). Throws -32011 saying why, with
    /// nothing written, when something on the path is refused.
    func save(_ document: SharedDocument, boundTo path: String) throws(ResponseError) -> (path: String, hash: String, imported: Int)? {
        guard let project = project(containing: path), let relative = project.projectPath(ofAbsolute: path) else { return nil }
        if let why = refusalToWrite(path) { throw Self.cannotSave(path, why) }
        // A pass writing the file off the loop would rename its older text over the save.
        settlePass(project)
        beforeFileAccess()
        let disk = editorDisk(of: project)
        let content: [UInt8]?
        do { content = try disk.bytes(at: relative) } catch { throw Self.cannotSave(path, refused(relative, in: project, error, "written")) }
        let imported = try parts.files.mergeOutsideChanges(of: document, content: content)
        let format = document.file?.format ?? .plain
        let text = document.text.string
        let bytes = format.encode(text)
        do { try disk.write(bytes, to: relative, syncingFolder: true) } catch { throw Self.cannotSave(path, refused(relative, in: project, error, "written")) }
        // The file holds the document's text now: a later change to it merges from here.
        try parts.files.bind(document, toFile: path, content: bytes, writtenByEditor: true)
        logger.info("project \(project.key): \(DisplayText.clean(relative.string)) saved by an editor (\(bytes.count) bytes)")
        return (path, TextHash.sha256Hex(text), imported)
    }

    /// The reason a read or write through the walk was refused (the file is not `done`), logged, cleaned.
    private func refused(_ path: ProjectPath, in project: SharedProject, _ error: DiskProject.Failure, _ done: String) -> String {
        let why = "\(DisplayText.clean(path.string)) of the project \(DisplayText.clean(project.name)) is not \(done): \(DisplayText.clean(error.description, limit: 300))"
        logger.warning("project \(project.key): \(why)")
        return why
    }

    private static func cannotSave(_ path: String, _ why: String) -> ResponseError {
        ResponseError(code: ResponseError.unavailableCode, message: "Cannot save \(DisplayText.clean(path, limit: 200)): \(why)")
    }
}
