import Foundation
import QuireProject
import QuireProtocol
import ReplicatingTypes

/// A project's record in the data directory, `projects/<key>/`: `project.json` (mode 0600: it
/// holds the secret), `tree` (the tree's operations, `ProjectTree.Operation.encode`) and
/// `known.json` (per file, the path and SHA-256 of what the daemon last wrote or read there).
///
/// Guarantees: every file is written atomically (a temporary file renamed into place); a record
/// that does not read back whole (damaged, or another key than its folder's) is skipped with a
/// warning, never half loaded; every size read is bounded before it is allocated.
struct ProjectRecordFile {
    static let maximumRecordBytes = 1 << 20
    static let maximumTreeBytes = 64 << 20
    static let maximumKnownBytes = 64 << 20

    /// `project.json`.
    struct Record: Codable {
        var version = 1
        var key: String
        var name: String
        var root: String
        var role: SharedProject.Role
        var secret: String
        var fingerprint: String
        var addresses: [String]
        var relay: String?
        var active: Bool
        var listen: [String]?
        var via: String?
    }

    /// One line of `known.json`.
    struct Known: Codable {
        var file: FileID
        var path: ProjectPath
        var sha256: String
        var stamp: SharedProject.Stamp?
    }

    let directory: String

    init(dataDirectory: String, key: String) {
        directory = dataDirectory + "/projects/" + key
    }

    /// The keys of the records under `dataDirectory`.
    static func keys(in dataDirectory: String) -> [String] {
        let names = (try? FileSystem.list(dataDirectory + "/projects")) ?? []
        return names.filter { name in
            name.utf8.count == 16 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }.sorted()
    }

    func save(_ project: SharedProject) throws {
        try FileSystem.makeDirectory(directory.components(separatedBy: "/").dropLast().joined(separator: "/"))
        try FileSystem.makeDirectory(directory)
        let record = Record(key: project.key, name: project.name, root: project.root, role: project.role, secret: Hex.encode(project.secret),
                            fingerprint: project.fingerprint, addresses: project.addresses, relay: project.relay, active: project.active,
                            listen: project.listen, via: project.via)
        try FileSystem.writeAtomically(Array(try JSONEncoder().encode(record)), to: directory + "/project.json", mode: 0o600)
    }

    func saveTree(_ tree: ProjectTree) throws {
        try FileSystem.writeAtomically(ProjectTree.Operation.encode(tree.operations), to: directory + "/tree", mode: 0o600)
    }

    func saveKnown(_ project: SharedProject) throws {
        let entries = project.known.sorted { $0.key < $1.key }.map { file, wanted in
            Known(file: file, path: wanted.path, sha256: project.knownHashes[file] ?? "", stamp: project.stamps[file])
        }
        try FileSystem.writeAtomically(Array(try JSONEncoder().encode(entries)), to: directory + "/known.json", mode: 0o600)
    }

    /// The project kept here, with its tree and what was known on disk: a known file whose bytes
    /// still hash as recorded is known with them; one changed since is known with a text it does
    /// not have, so the next scan reads it as an edit.
    func load(replica: ReplicaID) throws -> SharedProject {
        guard let bytes = try OwnedFiles.read(directory + "/project.json", secret: true) else {
            throw StorageError("no project.json in \(directory)")
        }
        guard bytes.count <= Self.maximumRecordBytes else { throw StorageError("\(directory)/project.json is over \(Self.maximumRecordBytes) bytes") }
        let record = try JSONDecoder().decode(Record.self, from: Data(bytes))
        let length = record.secret.utf8.count / 2
        guard JoinLine.secretBytes.contains(length), let secret = Hex.decode(record.secret, count: length) else {
            throw StorageError("\(directory)/project.json has no valid secret")
        }
        guard DocumentScope.projectKey(secret: secret) == record.key, directory.hasSuffix("/" + record.key) else {
            throw StorageError("\(directory)/project.json is for another project")
        }
        guard record.root.hasPrefix("/"), ProjectService.isFolderName(record.name) else {
            throw StorageError("\(directory)/project.json has an invalid root or name")
        }
        let project = SharedProject(key: record.key, name: record.name, root: record.root, role: record.role,
                                    secret: secret, fingerprint: record.fingerprint, addresses: record.addresses, relay: record.relay,
                                    replica: replica)
        project.active = record.active
        project.via = record.via.map { String($0.prefix(ProjectJoinRequest.maximumViaBytes)) }
        project.listen = Array((record.listen ?? []).prefix(ProjectShareRequest.maximumListen))
        if let treeBytes = try FileSystem.read(directory + "/tree") {
            guard treeBytes.count <= Self.maximumTreeBytes else { throw StorageError("\(directory)/tree is over \(Self.maximumTreeBytes) bytes") }
            for operation in try ProjectTree.Operation.decode(treeBytes) { try project.tree.apply(operation) }
        }
        if let knownBytes = try FileSystem.read(directory + "/known.json"), knownBytes.count <= Self.maximumKnownBytes {
            for entry in try JSONDecoder().decode([Known].self, from: Data(knownBytes)) {
                let disk = (try? ProjectReader.text(of: entry.path, root: record.root)) ?? ""
                let matches = TextHash.sha256Hex(bytes: Array(disk.utf8)) == entry.sha256
                // A text the file cannot hold (a NUL) stands for "changed since": never equal to the disk.
                project.setKnown(entry.file, ProjectWriter.Wanted(path: entry.path, text: matches ? disk : "\u{0}changed"))
                if matches, let stamp = entry.stamp { project.stamps[entry.file] = stamp }
            }
        }
        return project
    }
}
