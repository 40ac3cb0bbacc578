import QuireProject
import QuireProtocol

// Why the disk pass leaves a partner's file unwritten: names that decide what is shared or
// that would mislead, and the bounds and paths a file is held at until its revision or path moves.
extension ProjectService {
    /// Whether the file at `path` decides what a host shares: an ignore file (`.gitignore`,
    /// `.quireignore`) or a `.quire-root`, at any level. On a project this daemon hosts, the
    /// daemon never creates, changes, moves or removes one because of a peer (a partner's
    /// `!.env` would make the host send files it never shared); the change stays in the
    /// document, and the host's own save (or another program's write) is what reaches the disk.
    static func decidesSharing(_ path: ProjectPath) -> Bool {
        let name = path.name
        return ProjectScanner.ignoreFileNames.contains(where: { $0 == name }) || name == ".quire-root"
    }

    /// Why a partner's file may not be made at `path`: a name holding a C1 control (U+0080 to
    /// U+009F; U+009B starts an escape sequence in some terminals), a bidirectional control
    /// (U+202E makes `txt.exe` read as `exe.txt` in a listing) or a line or paragraph separator.
    /// `ProjectPath` refuses C0 controls on the wire; these pass it (refusing them there would
    /// make existing trees unreadable), so they are refused where a name reaches the disk.
    static func misleadingName(_ path: ProjectPath) -> String? { misleadingName(path.string) }

    /// `misleadingName` of a name or path given as text (a join line's project name).
    static func misleadingName(_ name: String) -> String? {
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x80...0x9F: return "a control character (U+\(String(scalar.value, radix: 16, uppercase: true)))"
            case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                return "a character that reorders how it is shown (U+\(String(scalar.value, radix: 16, uppercase: true)))"
            case 0x2028, 0x2029: return "a line or paragraph separator"
            default: continue
            }
        }
        return nil
    }

    /// A file whose folders would take the project past `diskLimits.files` folders is not written
    /// (logged once per revision and path): folders are made for it, and each takes a block and an
    /// inode whatever the file holds, so without this bound 10,000 small files of a partner, each
    /// 63 new folders deep, would take about 2.5 GB and 630,000 inodes (past what a scan looks at).
    func holdFolders(_ file: FileID, at path: ProjectPath, revision: UInt64, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) not written: its folders would take the project past \(diskLimits.files) folders")
    }

    /// A partner's file at a misleading name is not written there (logged once per revision and
    /// path; the document stays, shared with the other members).
    func holdMisleading(_ file: FileID, at path: ProjectPath, why: String, revision: UInt64, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) not written: its name holds \(why), which could make it pass for another file")
    }

    /// A peer's change to a file that decides what this host shares is not written (logged once
    /// per revision and path).
    func holdSharingFile(_ file: FileID, at path: ProjectPath, revision: UInt64, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) not written: a partner's change to a file that decides what this daemon shares waits for the host to save it")
    }

    /// A partner's file at a path this daemon's ignore files leave out (`.env`) is not written or
    /// moved there, on a host or a joiner: ignored paths are outside the share both ways, so a
    /// partner can neither put a file among the person's secrets nor have their own secret file
    /// (or what a program later writes there) bound to theirs
    /// (logged once per revision and path; the document stays, shared with the other members).
    func holdIgnored(_ file: FileID, at path: ProjectPath, revision: UInt64, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) not written: this project ignores that path (.gitignore, .quireignore), so a partner's file there stays a document")
    }

    /// Files of `project` an editor has open as another document (opened by name before the
    /// folder was shared, or by a client that names files itself): their buffers are the
    /// editor's too, so the writer holds them like the project's own open files.
    func pathsOpenOutsideTheProject(in project: SharedProject) -> Set<ProjectPath> {
        let prefix = "@\(project.key)/"
        var paths: Set<ProjectPath> = []
        for session in parts.sessions.sessions.values {
            for uri in session.openDocuments where !uri.hasPrefix(prefix) {
                if let file = parts.documents.document(uri)?.file?.path, let path = project.projectPath(ofAbsolute: file) { paths.insert(path) }
            }
        }
        return paths
    }

    /// A file that would pass `diskLimits` is not written (logged once per revision and path).
    func holdOversized(_ file: FileID, at path: ProjectPath, revision: UInt64, bytes: Int, in project: SharedProject) {
        if let hold = project.heldAt[file], hold.revision == revision, hold.path == path { return }
        project.heldAt[file] = (revision, path)
        logger.warning("project \(project.key): \(DisplayText.clean(path.string)) not written: \(bytes) bytes would pass the bounds of a project folder (\(diskLimits.fileBytes >> 20) MiB a file, \(diskLimits.totalBytes >> 20) MiB in all)")
    }
}
