import ReplicatingTypes

/// Where each live file of a project shows, on disk and to editors: a pure function of the
/// tree's registers, so every replica with the same state shows the same thing.
///
/// Guarantees: every live file has exactly one path; no two files share a path; no file's path is
/// the folder of another; every path is a valid `ProjectPath`.
public struct ProjectView: Sendable, Equatable {
    /// Each live file's path.
    public private(set) var paths: [FileID: ProjectPath] = [:]
    /// The file at each path.
    public private(set) var files: [ProjectPath: FileID] = [:]
    /// The files shown under a conflict name rather than the path they claim.
    public private(set) var conflicted: Set<FileID> = []

    /// The view of an empty project.
    public init() {}

    /// This view with only the file shown at `path`: how a project of one file shows (whatever
    /// else its tree holds, a conflict's loser or a path a modified peer made, shows nowhere, so
    /// it is neither written to disk nor named to an editor).
    /// - Complexity: O(1)
    public func restricted(to path: ProjectPath) -> ProjectView {
        var view = ProjectView()
        if let file = files[path] { view.place(file, at: path, conflicted: false) }
        return view
    }

    mutating func place(_ file: FileID, at path: ProjectPath, conflicted isConflict: Bool) {
        paths[file] = path
        files[path] = file
        if isConflict { conflicted.insert(file) }
    }
}

extension ProjectTree {
    /// The tree as it shows (`protocol/decisions/project-tree.md`, *Conflicts*): a path claimed by
    /// one file that is not a folder of another is that file's; where several files claim one
    /// path, the newest claim (largest timestamp) keeps it; a file claiming a path that is a
    /// folder of others loses it; each loser shows beside its claim as
    /// `name.conflict-<file>.ext`, with `-2`, `-3`... added should that be taken too.
    /// - Complexity: O(n log n) in the number of live files
    public var view: ProjectView {
        var view = ProjectView()
        var losers: [(file: FileID, claim: ProjectPath)] = []
        for (key, claimants) in claims {
            guard let path = try? ProjectPath(key.string), let first = claimants.first else { continue }
            let isFolder = folders[key] != nil
            if claimants.count == 1, !isFolder {
                view.place(first, at: path, conflicted: false)
                continue
            }
            let winner = isFolder ? nil : claimants.max { a, b in
                let (ra, rb) = (registers[a], registers[b])
                return ra?.timestamp != rb?.timestamp ? (ra?.timestamp ?? .zero) < (rb?.timestamp ?? .zero) : a < b
            }
            if let winner { view.place(winner, at: path, conflicted: false) }
            for file in claimants where file != winner { losers.append((file, path)) }
        }
        losers.sort { $0.file < $1.file }
        for loser in losers {
            let path = conflictPath(for: loser.file, claim: loser.claim, avoiding: view)
            view.place(loser.file, at: path, conflicted: true)
        }
        return view
    }

    /// A free path beside `claim` for `file`, or at the root when no such path fits the bounds.
    private func conflictPath(for file: FileID, claim: ProjectPath, avoiding view: ProjectView) -> ProjectPath {
        let folder = claim.ancestors.last.map { $0 + "/" } ?? ""
        let name = String(claim.name)
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let base = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        var attempt = 1
        while true {
            let marker = ".conflict-\(file)" + (attempt == 1 ? "" : "-\(attempt)")
            let room = ProjectPath.maximumComponentBytes - marker.utf8.count - ext.utf8.count
            let keptBase = room >= 0 ? Self.prefix(of: base, bytes: room) : ""
            let candidates = [folder + keptBase + marker + ext, "conflict-\(file)" + (attempt == 1 ? "" : "-\(attempt)")]
            for candidate in candidates {
                if let path = try? ProjectPath(candidate), view.files[path] == nil, claims[PathKey(candidate)] == nil, folders[PathKey(candidate)] == nil {
                    return path
                }
            }
            attempt += 1
        }
    }

    /// The longest prefix of `text`, in whole characters, of at most `bytes` UTF-8 bytes.
    private static func prefix(of text: String, bytes: Int) -> String {
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            guard used + size <= bytes else { break }
            result.append(character)
            used += size
        }
        return result
    }
}

extension LamportTimestamp {
    static let zero = LamportTimestamp(counter: 0, replica: ReplicaID(0))
}
