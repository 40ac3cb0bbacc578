import ReplicatingTypes

/// The identity of one file of a shared project, for the whole life of the file: made once by the
/// replica that creates the file, kept through renames, so the file's document stays the same.
///
/// Guarantee: unique, since each replica numbers its own files (`serial`) and replicas differ.
public struct FileID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var replica: ReplicaID
    public var serial: UInt64

    public init(replica: ReplicaID, serial: UInt64) {
        self.replica = replica
        self.serial = serial
    }

    public static func < (lhs: FileID, rhs: FileID) -> Bool {
        lhs.replica != rhs.replica ? lhs.replica < rhs.replica : lhs.serial < rhs.serial
    }

    /// `<replica>-<serial>` in hex, as it appears in conflict names.
    public var description: String { String(replica.rawValue, radix: 16) + "-" + String(serial, radix: 16) }
}

/// A shared project as a replicated file tree: for each file ever created, a last-writer-wins
/// register holding where the file is (a path) or that it is deleted (nil). Rules and their
/// reasons: `protocol/decisions/project-tree.md`.
///
/// Model: create, rename, delete and revive are one operation, `Operation` (a file, its new path
/// or nil, a Lamport timestamp); each file keeps the operation with the largest timestamp.
/// Folders are not entries: a folder exists while a file is under it, so deleting or renaming a
/// folder is an operation per file the deleting side knows of. Which file shows at which path
/// (`view`) is computed from the registers alone: two files claiming one path, or a file where
/// another file's folder is, are both kept, the losers under conflict names.
///
/// Guarantees:
/// 1. applying operations in any order, any number of times, and merging states in any order,
///    gives equal states and equal views (per-file last-writer-wins; ties broken by the value);
/// 2. no file is ever dropped by a conflict: every file whose register holds a path has exactly
///    one path in `view`, no two files share one, and no file's path is another's folder;
/// 3. `apply` refuses an operation that would make more than `maximumFiles` files (deleted ones
///    included);
/// 4. a local operation's timestamp is larger than every timestamp this copy has seen.
public struct ProjectTree: Sendable {
    public static let maximumFiles = 200_000

    /// One change to the tree, as sent to peers: `file` is now at `path` (nil: deleted).
    public struct Operation: Hashable, Sendable, Codable {
        public var file: FileID
        public var path: ProjectPath?
        public var timestamp: LamportTimestamp

        public init(file: FileID, path: ProjectPath?, timestamp: LamportTimestamp) {
            self.file = file
            self.path = path
            self.timestamp = timestamp
        }
    }

    /// Why a local change or a received operation is refused (nothing is changed).
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case pathTaken(ProjectPath)
        case folderInTheWay(String)
        case noSuchFile(FileID)
        case noSuchFolder(String)
        case tooManyFiles
        case clockExhausted

        public var description: String {
            switch self {
            case .pathTaken(let path): return "\(path.string.debugDescription) is already a file of the project"
            case .folderInTheWay(let path): return "\(path.debugDescription) is a file or folder of the project already"
            case .noSuchFile(let file): return "the project has no file \(file)"
            case .noSuchFolder(let folder): return "the project has no folder \(folder.debugDescription)"
            case .tooManyFiles: return "the project has \(ProjectTree.maximumFiles) files (deleted ones included), the most a project can have"
            case .clockExhausted: return "the project's clock has run out (a peer sent the largest timestamp); the project cannot change any more"
            }
        }
    }

    private(set) var registers: [FileID: ReplicatingRegister<ProjectPath?>] = [:]
    /// The live files claiming each path.
    private(set) var claims: [PathKey: Set<FileID>] = [:]
    /// For each folder (`a/b`, no trailing `/`), how many claims are under it.
    private(set) var folders: [PathKey: Int] = [:]
    /// The largest Lamport counter seen.
    private(set) var clock: UInt64 = 0
    private var nextSerial: UInt64 = 1
    /// The replica that makes this copy's local changes; not part of the replicated state.
    public let replica: ReplicaID

    public init(replica: ReplicaID) {
        self.replica = replica
    }

    /// Every file's current register as an operation (what a joining peer is sent), by file.
    public var operations: [Operation] {
        registers.map { Operation(file: $0.key, path: $0.value.value, timestamp: $0.value.timestamp) }.sorted { $0.file < $1.file }
    }

    /// The files whose register holds no path (deleted), in no particular order.
    /// - Complexity: O(files)
    public var deletedFiles: [FileID] {
        registers.compactMap { $0.value.value == nil ? $0.key : nil }
    }

    /// Where `file` is claimed to be (nil: deleted or unknown); its shown path is in `view`.
    public func claimedPath(of file: FileID) -> ProjectPath? { registers[file]?.value ?? nil }

    /// Whether `file` was ever created here (deleted or not).
    public func knows(_ file: FileID) -> Bool { registers[file] != nil }

    /// The number of files, deleted ones included.
    public var fileCount: Int { registers.count }

    // MARK: Applying operations

    /// Applies an operation (local or from a peer); returns whether the tree changed.
    /// - Complexity: O(depth of the path), amortized
    @discardableResult
    public mutating func apply(_ operation: Operation) throws(Refusal) -> Bool {
        let incoming = ReplicatingRegister(operation.path, timestamp: operation.timestamp, replica: replica)
        guard let current = registers[operation.file] else {
            guard registers.count < Self.maximumFiles else { throw .tooManyFiles }
            install(incoming, for: operation.file, replacing: nil)
            return true
        }
        guard Self.wins(incoming, over: current) else { return false }
        install(incoming, for: operation.file, replacing: current.value)
        return true
    }

    /// Whether `a` beats `b`: the larger timestamp, then (only for two writes with one timestamp,
    /// which a correct peer never makes) the larger value, a path beating a deletion.
    static func wins(_ a: ReplicatingRegister<ProjectPath?>, over b: ReplicatingRegister<ProjectPath?>) -> Bool {
        if a.timestamp != b.timestamp { return a.timestamp > b.timestamp }
        switch (a.value, b.value) {
        case (let x?, let y?): return y < x
        case (.some, nil): return true
        default: return false
        }
    }

    private mutating func install(_ register: ReplicatingRegister<ProjectPath?>, for file: FileID, replacing old: ProjectPath??) {
        if case let old?? = old { removeClaim(file, at: old) }
        registers[file] = register
        if let path = register.value { addClaim(file, at: path) }
        clock = max(clock, register.timestamp.counter)
        if file.replica == replica, file.serial >= nextSerial { nextSerial = file.serial == .max ? .max : file.serial + 1 }
    }

    private mutating func addClaim(_ file: FileID, at path: ProjectPath) {
        claims[PathKey(path.string), default: []].insert(file)
        for folder in path.ancestors { folders[PathKey(folder), default: 0] += 1 }
    }

    private mutating func removeClaim(_ file: FileID, at path: ProjectPath) {
        claims[PathKey(path.string)]?.remove(file)
        if claims[PathKey(path.string)]?.isEmpty == true { claims[PathKey(path.string)] = nil }
        for folder in path.ancestors {
            let count = (folders[PathKey(folder)] ?? 1) - 1
            folders[PathKey(folder)] = count > 0 ? count : nil
        }
    }

    // MARK: Local changes

    /// The timestamp of the next local operation.
    private func nextTimestamp() throws(Refusal) -> LamportTimestamp {
        guard clock < .max else { throw .clockExhausted }
        return LamportTimestamp(counter: clock + 1, replica: replica)
    }

    /// Whether a new file may go at `path`: no file claims it, it is no folder, and no folder
    /// on its way is a file.
    public func isFree(_ path: ProjectPath) -> Bool {
        claims[PathKey(path.string)] == nil && folders[PathKey(path.string)] == nil && !path.ancestors.contains { claims[PathKey($0)] != nil }
    }

    /// Creates a file at `path`; returns the operation to send (already applied here).
    public mutating func create(at path: ProjectPath) throws(Refusal) -> Operation {
        guard isFree(path) else { throw claims[PathKey(path.string)] != nil ? .pathTaken(path) : .folderInTheWay(path.string) }
        guard nextSerial < .max else { throw .clockExhausted }
        let operation = Operation(file: FileID(replica: replica, serial: nextSerial), path: path, timestamp: try nextTimestamp())
        try apply(operation)
        return operation
    }

    /// Moves `file` (live or deleted: a deleted file comes back) to `path`, which must be free.
    public mutating func move(_ file: FileID, to path: ProjectPath) throws(Refusal) -> Operation {
        guard registers[file] != nil else { throw .noSuchFile(file) }
        guard isFree(path) || claims[PathKey(path.string)] == [file] else { throw claims[PathKey(path.string)] != nil ? .pathTaken(path) : .folderInTheWay(path.string) }
        let operation = Operation(file: file, path: path, timestamp: try nextTimestamp())
        try apply(operation)
        return operation
    }

    /// Moves `file` to `path`, deleting the files claiming `path` first (`mv` onto a file).
    public mutating func move(_ file: FileID, replacing path: ProjectPath) throws(Refusal) -> [Operation] {
        guard registers[file] != nil else { throw .noSuchFile(file) }
        guard folders[PathKey(path.string)] == nil, !path.ancestors.contains(where: { claims[PathKey($0)] != nil }) else { throw .folderInTheWay(path.string) }
        var operations: [Operation] = []
        for other in (claims[PathKey(path.string)] ?? []).sorted() where other != file {
            operations.append(try delete(other))
        }
        operations.append(try move(file, to: path))
        return operations
    }

    /// Deletes `file`.
    public mutating func delete(_ file: FileID) throws(Refusal) -> Operation {
        guard registers[file]?.value != nil else { throw .noSuchFile(file) }
        let operation = Operation(file: file, path: nil, timestamp: try nextTimestamp())
        try apply(operation)
        return operation
    }

    /// The live files claiming paths under `folder`, sorted.
    public func files(under folder: String) -> [FileID] {
        registers.compactMap { entry in entry.value.value.flatMap { $0.isInside(folder: folder) && $0.string != folder ? entry.key : nil } }.sorted()
    }

    /// Deletes every file this copy knows under `folder` (`rm -r`); a file created there
    /// concurrently elsewhere stays, and keeps the folder.
    public mutating func deleteFolder(_ folder: String) throws(Refusal) -> [Operation] {
        let inside = files(under: folder)
        guard !inside.isEmpty else { throw .noSuchFolder(folder) }
        var operations: [Operation] = []
        for file in inside { operations.append(try delete(file)) }
        return operations
    }

    /// Moves every file this copy knows under `folder` to the same place under `newFolder`,
    /// which must not hold anything yet.
    public mutating func moveFolder(_ folder: String, to newFolder: ProjectPath) throws(Refusal) -> [Operation] {
        let inside = files(under: folder)
        guard !inside.isEmpty else { throw .noSuchFolder(folder) }
        guard isFree(newFolder), !newFolder.isInside(folder: folder) else { throw .folderInTheWay(newFolder.string) }
        var moves: [(FileID, ProjectPath)] = []
        for file in inside {
            guard let old = claimedPath(of: file) else { continue }
            let rest = old.string.utf8.dropFirst(folder.utf8.count)
            guard let moved = try? ProjectPath(newFolder.string + String(decoding: rest, as: UTF8.self)) else {
                throw .folderInTheWay(newFolder.string)
            }
            moves.append((file, moved))
        }
        var operations: [Operation] = []
        for (file, path) in moves {
            let operation = Operation(file: file, path: path, timestamp: try nextTimestamp())
            try apply(operation)
            operations.append(operation)
        }
        return operations
    }
}

extension ProjectTree: Replicable {
    /// The union of both copies, each file's newer register winning; keeps this copy's replica.
    /// - Complexity: O(n + m) amortized, n and m the copies' file counts
    public func merged(with other: ProjectTree) -> ProjectTree {
        var result = self
        for (file, register) in other.registers {
            // Both states were bounded when they came in (through `apply`); a merge keeps all of
            // both rather than half of one.
            if let current = result.registers[file] {
                if Self.wins(register, over: current) { result.install(register, for: file, replacing: current.value) }
            } else {
                result.install(register, for: file, replacing: nil)
            }
        }
        return result
    }
}

extension ProjectTree: Equatable {
    /// Equal replicated state: the same registers (values and timestamps); the replica aside.
    public static func == (lhs: ProjectTree, rhs: ProjectTree) -> Bool { lhs.registers == rhs.registers }
}

/// A path or folder as a dictionary key, equal and hashed by its bytes, as `ProjectPath` is.
struct PathKey: Hashable, Sendable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: PathKey, rhs: PathKey) -> Bool { lhs.string.utf8.elementsEqual(rhs.string.utf8) }

    func hash(into hasher: inout Hasher) {
        for byte in string.utf8 { hasher.combine(byte) }
    }
}
