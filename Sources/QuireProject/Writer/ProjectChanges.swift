/// What changed on disk since the daemon last wrote or read a project folder, as the tree and the
/// documents see it: edits, creates, deletes, and renames recognised by content.
///
/// Rules: a path known and present with other text is an edit of its file; a known file whose
/// path is gone and a new path with exactly its text (as `git mv`, a refactoring tool or `mv`
/// leave them) are one rename, so the file keeps its identity and document; what is left are
/// deletes and creates. Pairing is deterministic (gone files and new paths each in path order),
/// so the same disk change gives the same result on any run.
public struct ProjectChanges: Sendable, Equatable {
    public var edits: [FileID: String] = [:]
    public var renames: [FileID: ProjectPath] = [:]
    public var deletes: Set<FileID> = []
    /// New paths and their text.
    public var creates: [ProjectPath: String] = [:]

    public init() {}

    public var isEmpty: Bool { edits.isEmpty && renames.isEmpty && deletes.isEmpty && creates.isEmpty }

    /// The changes from `known` (what the daemon last wrote or read of each file) to `disk` (the
    /// text at each shared path now, from a scan).
    /// - Complexity: O(n log n) in the number of files
    public static func between(known: [FileID: ProjectWriter.Wanted], disk: [ProjectPath: String]) -> ProjectChanges {
        var changes = ProjectChanges()
        var knownPaths: [ProjectPath: FileID] = [:]
        for (file, entry) in known { knownPaths[entry.path] = file }
        var gone: [(file: FileID, entry: ProjectWriter.Wanted)] = []
        for (file, entry) in known.sorted(by: { $0.value.path < $1.value.path }) {
            if let text = disk[entry.path] {
                if text != entry.text { changes.edits[file] = text }
            } else {
                gone.append((file, entry))
            }
        }
        var appeared: [String: [ProjectPath]] = [:]
        for (path, text) in disk.sorted(by: { $0.key < $1.key }) where knownPaths[path] == nil {
            appeared[text, default: []].append(path)
        }
        for (file, entry) in gone {
            if var candidates = appeared[entry.text], !candidates.isEmpty {
                changes.renames[file] = candidates.removeFirst()
                appeared[entry.text] = candidates
            } else {
                changes.deletes.insert(file)
            }
        }
        for (text, paths) in appeared {
            for path in paths { changes.creates[path] = text }
        }
        return changes
    }
}
