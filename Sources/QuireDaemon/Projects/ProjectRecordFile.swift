import Foundation
import QuireProject
import QuireProtocol
import ReplicatingTypes

/// A project's record in the data directory, `projects/<key>/`: `project.json` (mode 0600: it
/// holds the secret, the invitations' secrets, the roster's founder and the members' names),
/// `tree` (the tree's operations, `ProjectTree.Operation.encode`), `roster` (the roster's
/// signed changes, `RosterChange.encode`, mode 0600) and `known.json` (per file, the path and
/// SHA-256 of what the daemon last wrote or read there).
///
/// Guarantees: every file is written atomically (a temporary file renamed into place); a record
/// that does not read back whole (damaged, or another key than its folder's) is skipped with a
/// warning, never half loaded; every size read is bounded before it is allocated.
struct ProjectRecordFile {
    static let maximumRecordBytes = 1 << 20
    static let maximumTreeBytes = 64 << 20
    static let maximumKnownBytes = 64 << 20
    /// The most a roster's file may hold: `ProjectRoster.maximumChanges` changes of at most 140 bytes.
    static let maximumRosterBytes = 1 << 20

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
        /// The one file of a project of one file (a name in `root`); absent for a folder.
        var file: ProjectPath?
        // Roles (issue 22); absent in a record made before them.
        var founder: String?
        var names: [String: String]?
        var invitations: [ProjectInvitation.Record]?
        var memberSecretAdmits: Bool?
        var redeeming: Bool?
        var pendingRole: String?
        var removed: String?
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
        var record = Record(key: project.key, name: project.name, root: project.root, role: project.role, secret: Hex.encode(project.secret),
                            fingerprint: project.fingerprint, addresses: project.addresses, relay: project.relay, active: project.active,
                            listen: project.listen, via: project.via, file: project.file)
        record.founder = project.roster.map { Hex.encode($0.founder.bytes) }
        record.names = Dictionary(uniqueKeysWithValues: project.names.map { (Hex.encode($0.key.bytes), $0.value) })
        record.invitations = project.invitations.map(\.record)
        record.memberSecretAdmits = project.memberSecretAdmits
        record.redeeming = project.redeeming
        record.pendingRole = project.pendingRole.rawValue
        record.removed = project.removedReason
        try FileSystem.writeAtomically(Array(try JSONEncoder().encode(record)), to: directory + "/project.json", mode: 0o600)
    }

    /// Writes the roster's changes (in replay order), atomically, mode 0600.
    func saveRoster(_ roster: ProjectRoster) throws {
        try FileSystem.makeDirectory(directory.components(separatedBy: "/").dropLast().joined(separator: "/"))
        try FileSystem.makeDirectory(directory)
        try FileSystem.writeAtomically(RosterChange.encode(roster.orderedChanges), to: directory + "/roster", mode: 0o600)
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
        guard let bytes = try OwnedFiles.read(directory + "/project.json", secret: true, limit: Self.maximumRecordBytes) else {
            throw StorageError("no project.json in \(directory)")
        }
        let record = try JSONDecoder().decode(Record.self, from: Data(bytes))
        let length = record.secret.utf8.count / 2
        guard JoinLine.secretBytes.contains(length), let secret = Hex.decode(record.secret, count: length) else {
            throw StorageError("\(directory)/project.json has no valid secret")
        }
        guard record.redeeming == true || DocumentScope.projectKey(secret: secret) == record.key, directory.hasSuffix("/" + record.key) else {
            throw StorageError("\(directory)/project.json is for another project")
        }
        guard record.root.hasPrefix("/"), ProjectService.isFolderName(record.name), record.file.map({ $0.components.count == 1 }) != false else {
            throw StorageError("\(directory)/project.json has an invalid root, name or file")
        }
        let project = SharedProject(key: record.key, name: record.name, root: record.root, role: record.role,
                                    secret: secret, fingerprint: record.fingerprint, addresses: record.addresses, relay: record.relay,
                                    replica: replica, file: record.file)
        project.active = record.active
        project.via = record.via.map { String($0.prefix(ProjectJoinRequest.maximumViaBytes)) }
        project.listen = Array((record.listen ?? []).prefix(ProjectShareRequest.maximumListen))
        try loadRoles(record, into: project)
        if let treeBytes = try FileSystem.read(directory + "/tree", limit: Self.maximumTreeBytes) {
            for operation in try ProjectTree.Operation.decode(treeBytes) { try project.tree.apply(operation) }
        }
        // An oversized note of what was on disk is left unread, as if missing: the next scan reads the disk.
        if FileSystem.size(directory + "/known.json") ?? 0 <= Self.maximumKnownBytes,
           let knownBytes = try FileSystem.read(directory + "/known.json", limit: Self.maximumKnownBytes) {
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

    /// The roster, names, invitations and role state of `record` (and the `roster` file): a
    /// roster change that does not verify fails the whole record.
    private func loadRoles(_ record: Record, into project: SharedProject) throws {
        project.memberSecretAdmits = record.memberSecretAdmits ?? false
        project.redeeming = record.redeeming ?? false
        project.removedReason = record.removed.map { String($0.prefix(RosterPayload.maximumReasonBytes)) }
        // A project joined before roles wrote as every member did; a new join waits for its roster.
        project.pendingRole = record.pendingRole.flatMap(ProjectRole.init(rawValue:)) ?? .write
        project.invitations = (record.invitations ?? []).prefix(ProjectInvitation.maximumPerProject).compactMap(ProjectInvitation.init(record:))
        for (hex, name) in (record.names ?? [:]).prefix(ProjectRoster.maximumMembers) {
            if let bytes = Hex.decode(hex, count: MemberKey.byteCount), let key = MemberKey(bytes) {
                project.names[key] = DisplayText.clean(name, limit: ProjectService.maximumMemberNameBytes)
            }
        }
        guard let founderHex = record.founder else { return }
        guard let bytes = Hex.decode(founderHex, count: MemberKey.byteCount), let founder = MemberKey(bytes) else {
            throw StorageError("\(directory)/project.json has an invalid roster founder")
        }
        var roster = ProjectRoster(projectKey: record.key, founder: founder)
        if let rosterBytes = try OwnedFiles.read(directory + "/roster", secret: true, limit: Self.maximumRosterBytes) {
            do { try roster.apply(contentsOf: try RosterChange.decode(rosterBytes)) } catch {
                throw StorageError("\(directory)/roster does not read back: \(error)")
            }
        }
        project.roster = roster
    }
}
