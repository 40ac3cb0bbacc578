/// What is at a path of a project folder on disk, as the writer needs to know it.
public enum DiskEntry: Equatable, Sendable {
    case absent
    /// A regular file and its text (nil when it is not UTF-8 text).
    case file(String?)
    case folder
    case symbolicLink
    /// A FIFO, socket or device.
    case other
}

/// The disk as the writer plans against it: what is at a path, seen without following links.
public protocol ProjectDisk {
    func entry(at path: ProjectPath) -> DiskEntry
}

/// Works out what to do on disk so that a project folder shows the tree (`ProjectTree.view`) and
/// the documents' texts: which files to write, rename and remove, in an order that works.
///
/// Rules (`protocol/decisions/project-tree.md`, *Writing to disk*):
/// 1. a path open in an editor is never written, renamed or removed (the editor's save writes
///    it); such files are held, with the reason;
/// 2. a file is only overwritten, moved or removed when the disk still holds what the daemon last
///    knew of it (`known`): a change on disk not yet read is never lost, the file is held as
///    `changedOnDisk` and the caller reads it first;
/// 3. nothing is written at a path with a symbolic link, a file or a special file on its way, or
///    over anything but a regular file (paths are `ProjectPath`s, so never outside the root);
/// 4. removals come first, then renames (a cycle goes through a temporary name), then writes,
///    then the removal of folders a removal or rename emptied (only if nothing at all is left);
/// 5. nothing makes or changes a version-control repository, held as `repository`: no file
///    named `HEAD` whose text git would take for a repository's (`GitRepositoryLook`) is written
///    or moved into place, and nothing is written, removed, moved into or moved out of a folder
///    (the root included) whose `HEAD` on disk git would take, or could (a link, or a file that
///    is not UTF-8 text), nor another system's repository folder (`RepositoryFolders`: `.hg`,
///    `.jj`, ...). Every step a pass takes is a partner's change, and these tools run commands
///    their repository's configuration names.
///
/// Pure: it reads `ProjectDisk` and returns a `Plan`; `DiskProject` carries plans out, each write
/// atomically (a temporary file renamed into place).
public enum ProjectWriter {
    /// What the tree wants at a file's place.
    public struct Wanted: Sendable, Equatable {
        public var path: ProjectPath
        public var text: String

        public init(path: ProjectPath, text: String) {
            self.path = path
            self.text = text
        }
    }

    /// One step on disk.
    public enum Action: Sendable, Equatable {
        case remove(ProjectPath)
        case rename(from: ProjectPath, to: ProjectPath)
        /// Write the whole text, atomically, making the folders on the way.
        case write(ProjectPath, String)
        /// Remove the folder if nothing is left in it (a file the project does not share, an
        /// ignored build output, keeps it); last, deepest first.
        case removeFolderIfEmpty(ProjectPath)
    }

    /// Why a file is not brought up to date this time.
    public enum Hold: Sendable, Equatable {
        case openInEditor
        /// The disk does not hold what the daemon last knew: read the change first.
        case changedOnDisk
        /// A symbolic link at the path or on the way to it.
        case linkOnPath
        /// A file or special file where a folder is needed, or a folder or special file at the path.
        case notAFile
        /// Another file is at the path and is not moving away.
        case occupied
        /// The file would make or change a version-control repository (rule 5).
        case repository
    }

    /// What to do, in order, and what the daemon will know of each file once it is done.
    public struct Plan: Sendable, Equatable {
        public var actions: [Action] = []
        public var held: [FileID: Hold] = [:]
        /// `known` after the actions (a held file keeps what was known of it).
        public var known: [FileID: Wanted] = [:]
    }

    /// The plan that brings `disk` to `wanted` (each live file's path and text), given what the
    /// daemon last wrote or read of each file (`known`) and the paths open in editors (`open`).
    /// - Complexity: O(files × depth) disk lookups, plus O(renames²) to order renames.
    public static func plan(wanted: [FileID: Wanted], known: [FileID: Wanted], open: Set<ProjectPath>, disk: some ProjectDisk) -> Plan {
        var planner = Planner(disk: disk, open: open, known: known)
        planner.remove(wanted: wanted)
        planner.move(wanted: wanted)
        planner.write(wanted: wanted)
        planner.removeEmptiedFolders(wanted: wanted)
        return planner.plan
    }
}

/// The planning state: the plan so far and the disk as it will be after it.
private struct Planner<Disk: ProjectDisk> {
    let disk: Disk
    let open: Set<ProjectPath>
    var plan = ProjectWriter.Plan()
    /// What the actions so far change on disk.
    var overlay: [ProjectPath: DiskEntry] = [:]
    /// Folders the writes so far make.
    var madeFolders: Set<String> = []
    /// What the disk holds at each folder looked at so far (a plan looks at a folder once, not
    /// once per file in it: each look walks from the root).
    let folders = FolderEntries()

    init(disk: Disk, open: Set<ProjectPath>, known: [FileID: ProjectWriter.Wanted]) {
        self.disk = disk
        self.open = open
        plan.known = known
    }

    func entry(_ path: ProjectPath) -> DiskEntry {
        if let entry = overlay[path] { return entry }
        if madeFolders.contains(path.string) { return .folder }
        // Below a folder the disk does not have, nothing is on the disk either.
        if path.ancestors.contains(where: { folders.entries[$0] == .absent }) { return .absent }
        return disk.entry(at: path)
    }

    /// `entry` of a folder on the way to a file, each one looked up on disk once per plan.
    func folderEntry(_ folder: String) -> DiskEntry? {
        guard let path = try? ProjectPath(folder) else { return nil }
        if let entry = overlay[path] { return entry }
        if madeFolders.contains(folder) { return .folder }
        if let known = folders.entries[folder] { return known }
        let found = entry(path)
        folders.entries[folder] = found
        return found
    }

    /// Why `text` may not be put at `path` by a write or a move, nil when it may: an `obstacle`,
    /// or a repository it would make or change (rule 5).
    func obstacle(_ path: ProjectPath, text: String) -> ProjectWriter.Hold? {
        if GitRepositoryLook.isHeadName(path.name), GitRepositoryLook.looksLikeHead(text) { return .repository }
        if path.components.contains(where: RepositoryFolders.isMetadataName) { return .repository }
        if let obstacle = obstacle(path) { return obstacle }
        return inRepository(path) ? .repository : nil
    }

    /// Whether a file at `path` is a repository's own, which no removal or move takes away
    /// (rule 5): in another system's repository folder, or in a folder whose `HEAD` git takes.
    func isRepositorys(_ path: ProjectPath) -> Bool {
        path.components.contains(where: RepositoryFolders.isMetadataName) || inRepository(path)
    }

    /// Whether a folder `path` is in (the root included) holds a `HEAD` git would take, or could,
    /// for a repository's, on the disk as the plan found it. Each folder is looked at once per
    /// plan: no step of it can change what a folder's `HEAD` is, as this rule holds every removal,
    /// move or write that would.
    func inRepository(_ path: ProjectPath) -> Bool {
        for folder in [""] + path.ancestors {
            if let known = folders.repositories[folder] {
                if known { return true }
                continue
            }
            // A folder not on disk when the plan began holds only what the plan puts there
            // (`obstacle` looked it up first), and this rule holds any HEAD git would take.
            if !folder.isEmpty, folders.entries[folder] == .absent {
                folders.repositories[folder] = false
                continue
            }
            var found = false
            if let head = try? ProjectPath(folder.isEmpty ? "HEAD" : folder + "/HEAD") {
                switch disk.entry(at: head) {
                case .symbolicLink: found = true
                case .file(let text): found = text.map(GitRepositoryLook.looksLikeHead) ?? true
                case .absent, .folder, .other: found = false
                }
            }
            folders.repositories[folder] = found
            if found { return true }
        }
        return false
    }

    /// Why nothing may be put at `path`, nil when a file may go there (absent or a regular file).
    func obstacle(_ path: ProjectPath) -> ProjectWriter.Hold? {
        for folder in path.ancestors {
            guard let found = folderEntry(folder) else { return .notAFile }
            switch found {
            case .absent, .folder: continue
            case .symbolicLink: return .linkOnPath
            case .file, .other: return .notAFile
            }
        }
        switch entry(path) {
        case .absent, .file: return nil
        case .symbolicLink: return .linkOnPath
        case .folder, .other: return .notAFile
        }
    }

    mutating func hold(_ file: FileID, _ reason: ProjectWriter.Hold) {
        plan.held[file] = reason
    }

    mutating func record(_ action: ProjectWriter.Action) {
        plan.actions.append(action)
        switch action {
        case .remove(let path): overlay[path] = .absent
        case .rename(let from, let to):
            overlay[to] = entry(from)
            overlay[from] = .absent
            for folder in to.ancestors { madeFolders.insert(folder) }
        case .write(let path, let text):
            overlay[path] = .file(text)
            for folder in path.ancestors { madeFolders.insert(folder) }
        case .removeFolderIfEmpty:
            break
        }
    }

    /// The folders of removed or moved-away files that no wanted file is in, deepest first.
    mutating func removeEmptiedFolders(wanted: [FileID: ProjectWriter.Wanted]) {
        var left: Set<String> = []
        for action in plan.actions {
            switch action {
            case .remove(let path), .rename(from: let path, to: _): left.formUnion(path.ancestors)
            default: break
            }
        }
        guard !left.isEmpty else { return }
        var kept: Set<String> = []
        for target in wanted.values { kept.formUnion(target.path.ancestors) }
        for known in plan.known.values { kept.formUnion(known.path.ancestors) }
        let folders = left.subtracting(kept).sorted { a, b in
            let (da, db) = (a.split(separator: "/").count, b.split(separator: "/").count)
            return da != db ? da > db : a < b
        }
        for folder in folders {
            if let path = try? ProjectPath(folder) { plan.actions.append(.removeFolderIfEmpty(path)) }
        }
    }

    /// Files known on disk that the tree deleted.
    mutating func remove(wanted: [FileID: ProjectWriter.Wanted]) {
        for (file, known) in plan.known.sorted(by: { $0.key < $1.key }) where wanted[file] == nil {
            if open.contains(known.path) { hold(file, .openInEditor); continue }
            switch entry(known.path) {
            case .absent:
                plan.known[file] = nil
            case .file(known.text):
                if isRepositorys(known.path) {
                    hold(file, .repository)
                    continue
                }
                record(.remove(known.path))
                plan.known[file] = nil
            case .symbolicLink: hold(file, .linkOnPath)
            default: hold(file, .changedOnDisk)
            }
        }
    }

    /// Files known on disk at another path than the tree's.
    mutating func move(wanted: [FileID: ProjectWriter.Wanted]) {
        var pending: [(file: FileID, from: ProjectPath, to: ProjectPath)] = []
        for (file, target) in wanted.sorted(by: { $0.key < $1.key }) {
            guard let known = plan.known[file], known.path != target.path else { continue }
            if open.contains(known.path) || open.contains(target.path) { hold(file, .openInEditor); continue }
            switch entry(known.path) {
            case .file(known.text) where isRepositorys(known.path):
                hold(file, .repository)
                continue
            case .file(known.text): break
            case .absent:
                // Gone from its old place: the write phase puts it at the new one.
                plan.known[file] = nil
                continue
            case .symbolicLink:
                hold(file, .linkOnPath)
                continue
            default:
                hold(file, .changedOnDisk)
                continue
            }
            if let obstacle = obstacle(target.path, text: known.text) { hold(file, obstacle); continue }
            pending.append((file, known.path, target.path))
        }
        var temporaryCount = 0
        while !pending.isEmpty {
            var progressed = false
            for (index, move) in pending.enumerated().reversed() {
                guard case .absent = entry(move.to) else { continue }
                record(.rename(from: move.from, to: move.to))
                plan.known[move.file]?.path = move.to
                pending.remove(at: index)
                progressed = true
            }
            if progressed { continue }
            // Every target is taken: by a file that moves away (a cycle) or by one that stays.
            let sources = Set(pending.map(\.from))
            guard let index = pending.firstIndex(where: { sources.contains($0.to) }) else {
                for move in pending { hold(move.file, .occupied) }
                break
            }
            let move = pending[index]
            temporaryCount += 1
            let folder = move.from.ancestors.last.map { $0 + "/" } ?? ""
            guard let temporary = try? ProjectPath(folder + ".quire-move-\(move.file)-\(temporaryCount)"), case .absent = entry(temporary) else {
                hold(move.file, .occupied)
                pending.remove(at: index)
                continue
            }
            record(.rename(from: move.from, to: temporary))
            plan.known[move.file]?.path = temporary
            pending[index].from = temporary
        }
    }

    /// Files whose text or presence on disk differs from the tree's.
    mutating func write(wanted: [FileID: ProjectWriter.Wanted]) {
        for (file, target) in wanted.sorted(by: { $0.key < $1.key }) where plan.held[file] == nil {
            let known = plan.known[file]
            if let known, known.path != target.path { continue }  // a move that could not be made
            let current = entry(target.path)
            if current == .file(target.text) {
                plan.known[file] = target
                continue
            }
            if open.contains(target.path) { hold(file, .openInEditor); continue }
            if let obstacle = obstacle(target.path, text: target.text) { hold(file, obstacle); continue }
            switch current {
            case .absent:
                break
            case .file(let text) where known != nil && text == known?.text:
                break
            default:
                hold(file, known == nil ? .occupied : .changedOnDisk)
                continue
            }
            record(.write(target.path, target.text))
            plan.known[file] = target
        }
    }
}

/// The disk's entries at the folders one plan looked at (the planner is a value; this is shared
/// by its copies).
private final class FolderEntries {
    var entries: [String: DiskEntry] = [:]
    /// Whether each folder looked at holds a repository's `HEAD` (`inRepository`).
    var repositories: [String: Bool] = [:]
}
