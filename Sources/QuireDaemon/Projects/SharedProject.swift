// Projects/: the projects this daemon shares or joined (protocol/decisions/project-sharing.md):
// their records, tree sync over the project's links, and the two-way sync of files and documents.
// May call: Core's parts (documents, files, the operation path, links, sessions), Storage's
// file helpers and QuireProject; the sessions only as `EditorEndpoint`, links as `PeerEndpoint`.
import Glibc
import QuireProject
import ReplicatingTypes

/// One project this daemon shares (`host`) or joined (`joined`): where it is, its secret and key,
/// the replicated tree, and what the daemon last wrote to or read from disk for each file. A
/// project of one file (`file` set: a file shared by itself) is a folder project whose view, disk
/// work and naming see that one file of `root` only.
///
/// Guarantees: `key` is `DocumentScope.projectKey(secret:)` of `secret`, except while a joiner
/// `redeeming` an invitation speaks with the invitation's secret; `known` only holds what was on
/// disk at the file's path when the daemon last wrote or read it (the writer's rule 2); `roster`
/// holds only changes that verified for this project (protocol/decisions/roles.md).
final class SharedProject {
    enum Role: String, Codable, Sendable {
        case host
        case joined
    }

    /// What a file looked like on disk when the daemon last wrote or read it: a cheap check that
    /// it was not changed since, before reading it.
    struct Stamp: Equatable, Codable, Sendable {
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
        var inode: UInt64

        /// The stamp of the regular file at `path` (not followed), nil when there is none.
        static func of(_ path: String) -> Stamp? {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return Stamp(size: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec),
                         modifiedNanoseconds: Int64(info.st_mtim.tv_nsec), inode: UInt64(info.st_ino))
        }
    }

    let key: String
    let name: String
    /// The project folder (absolute, no trailing `/`).
    let root: String
    /// The one file of a project of one file (`quire share FILE`, or a join line marked
    /// `singleFile`): a name in `root`, the only path the project shows, scans, writes or maps
    /// an editor's file to; nil for a folder project.
    let file: ProjectPath?
    let role: Role
    /// The member secret's key material (kept mode 0600), or, while `redeeming`, the invitation's
    /// secret this joiner links with until the owner sends the member secret.
    var secret: [UInt8]
    /// Who may do what (nil on a joined project until the first roster arrives from its host).
    var roster: ProjectRoster?
    /// The user name each key last linked with (cleaned, bounded), for `project/members` and
    /// naming members in `project/role`; kept with the record, never sent.
    var names: [MemberKey: String] = [:]
    /// The invitations this (owner) daemon issued that are still good: their secrets are extra
    /// secrets of the project's scope.
    var invitations: [ProjectInvitation] = []
    /// A project shared before roles existed: its member secret (the line it gave out) still
    /// admits a key the roster does not name, as `write` (protocol/decisions/roles.md).
    var memberSecretAdmits = false
    /// A joiner whose `secret` is still an invitation's.
    var redeeming = false
    /// This daemon's role before its roster arrives (a joiner): `read` for a new join, `write`
    /// for a project joined before roles existed.
    var pendingRole: ProjectRole = .read
    /// Why this daemon was removed from the project (then it is stopped for good: not dialed
    /// again; its files and documents stay).
    var removedReason: String?
    /// The join line's parts: the host's fingerprint (hex), the addresses and the relay.
    var fingerprint: String
    var addresses: [String]
    var relay: String?
    /// What this (hosting) daemon dials `relay` with while the project is active: `member` for
    /// its member secret, else an invitation's tag (`ProjectService+Relay`); not kept.
    var relayDialed: Set<String> = []
    /// A command reaching the host's machine (`ssh host`): peer over `<via> quire peer --stdio`
    /// instead of the addresses and relay.
    var via: String?
    var tree: ProjectTree {
        didSet {
            cachedView = nil
            cachedDeleted = nil
            passAll = true
        }
    }
    private var cachedDeleted: [FileID]?
    /// The files the tree holds deleted, sorted, computed once per change of the tree (the
    /// forgetter asks for them at every heartbeat, `ProjectService+Forgetting`).
    var deletedFiles: [FileID] {
        if let cachedDeleted { return cachedDeleted }
        let deleted = tree.deletedFiles.sorted()
        cachedDeleted = deleted
        return deleted
    }
    private var cachedView: ProjectView?
    /// `tree.view`, computed once per change of the tree (the disk passes ask for it every 200 ms).
    var view: ProjectView {
        if let cachedView { return cachedView }
        let view = file.map { tree.view.restricted(to: $0) } ?? tree.view
        cachedView = view
        return view
    }
    /// What the daemon last wrote to or read from disk for each file (path and bytes as text);
    /// changed through `setKnown`, which keeps its hash.
    private(set) var known: [FileID: ProjectWriter.Wanted] = [:]
    /// SHA-256 (hex) of each known text, as kept in `known.json`.
    private(set) var knownHashes: [FileID: String] = [:]
    /// The UTF-8 bytes of every known text together (what the project's files hold on disk).
    private(set) var knownBytes = 0
    /// Files the next disk pass looks at (`ProjectService.syncDisk`), besides every file when
    /// `passAll`: their document changed or came, an editor opened or closed it, what is known of
    /// it on disk changed, or the last pass could not decide it yet (its document or its text
    /// still on the way). A pass costs what changed, not the project's size.
    var passFiles: Set<FileID> = []
    /// The next disk pass looks at every file: the tree changed, the disk was scanned (which
    /// lets held files be tried again), or something not tied to one file changed.
    var passAll = true
    /// How many files the last disk pass looked at (for `quire-bench` and tests: an idle project's
    /// pass looks at none).
    var lastPassLooked = 0
    /// How many files the last disk pass planned to write or check against their documents (for
    /// tests: a share's first pass plans none of the files it just read).
    var lastPassWanted = 0
    var stamps: [FileID: Stamp] = [:]
    /// The document revision last written to or read from disk, per file.
    var writtenRevisions: [FileID: UInt64] = [:]
    /// The formats peers told for files (`ProjectFormats`); a bound document's own comes first.
    var formats: [FileID: FileFormat] = [:]
    /// Files the writer held (the document revision and path then): not tried again until
    /// either changes or the disk is scanned.
    var heldAt: [FileID: (revision: UInt64, path: ProjectPath)] = [:]
    /// Files of `heldAt` the writer held because an editor showed their path
    /// (`ProjectWriter.Hold.openInEditor`): tried again as soon as any editor opens or closes a
    /// document (`ProjectService.editorViewsChanged`), not at the next scan.
    var heldOpen: Set<FileID> = []
    /// Shared or followed now; a stopped project keeps its record (sharing the root again reuses
    /// its secret) but has no secret registered and no disk work.
    var active = true
    /// What the scan refused and the log said already (`ProjectService.logRefusals`), each
    /// path and reason once; at most `maximumRefusalsLogged`, then said again from the start.
    var refusalsLogged: Set<String> = []
    static let maximumRefusalsLogged = 4096

    /// The ports listened on for this project (host), if any.
    var listeningPorts: [Int] = []
    /// Where it listens (`host:port`, the port as bound): listened on again after a restart, so
    /// the join line stays valid.
    var listen: [String] = []
    /// The tree changed since it was last kept.
    var treeDirty = false
    /// `known` changed since it was last kept (kept with the tree, or on a re-scan tick: a stale
    /// `known.json` only costs a re-read after a restart).
    var knownDirty = false
    /// Something on disk may have changed: scan before the next write.
    var needsScan = false
    /// The disk pass writing off the event loop now (`ProjectService.write`), until it is
    /// recorded: no other pass, scan or editor access to the files meanwhile.
    var passInFlight: DiskPassRunner.Pending?
    /// The last `project/progress` sent (files, written).
    var lastProgress: (files: Int, written: Int)?
    /// When `lastProgress` last changed (`DispatchTime` nanoseconds): a join still writing its
    /// files keeps the store's own-files maker waiting while this is recent (`syncDisk`).
    var lastProgressAt: UInt64 = 0
    /// Since when (`DispatchTime` nanoseconds) a link of this hosted project has been behind in
    /// bulk (a peer joining): the maker waits for at most a while from then (`syncDisk`).
    var bulkSendSince: UInt64?
    /// A tree frame came from a link this run (the host sends one, empty or not, whenever a link
    /// comes up): an empty project's join is then complete.
    var treeHeard = false
    var watcher: ProjectWatcher?

    init(key: String, name: String, root: String, role: Role, secret: [UInt8], fingerprint: String,
         addresses: [String], relay: String?, replica: ReplicaID, file: ProjectPath? = nil) {
        self.key = key
        self.name = name
        self.root = root
        self.file = file
        self.role = role
        self.secret = secret
        self.fingerprint = fingerprint
        self.addresses = addresses
        self.relay = relay
        tree = ProjectTree(replica: replica)
    }

    var scope: DocumentScope { .project(key: key) }

    /// Records what the daemon wrote or read at `file`'s place (nil: nothing of it on disk).
    func setKnown(_ file: FileID, _ wanted: ProjectWriter.Wanted?) {
        knownBytes += (wanted?.text.utf8.count ?? 0) - (known[file]?.text.utf8.count ?? 0)
        passFiles.insert(file)
        known[file] = wanted
        knownHashes[file] = wanted.map { TextHash.sha256Hex(bytes: Array($0.text.utf8)) }
    }

    private var uris: [FileID: String] = [:]

    /// The document name of `file` (made once: the disk pass asks for every file's every 200 ms).
    func uri(of file: FileID) -> String {
        if let uri = uris[file] { return uri }
        let uri = DocumentScope.projectURI(key: key, file: file.description)
        if uris.count < ProjectTree.maximumFiles { uris[file] = uri }
        return uri
    }

    /// The absolute path of `path` in the project folder.
    func absolute(_ path: ProjectPath) -> String { root + "/" + path.string }

    /// What is shared, absolute: the one file of a project of one file, else the folder.
    var shared: String { file.map(absolute) ?? root }

    /// The project path of the absolute `path`, nil when it is not strictly inside the root,
    /// breaks `ProjectPath`'s rules, or is not the one file of a project of one file.
    func projectPath(ofAbsolute path: String) -> ProjectPath? {
        let prefix = root + "/"
        guard path.hasPrefix(prefix) else { return nil }
        let relative = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        guard let projectPath = try? ProjectPath(relative) else { return nil }
        if let file, projectPath != file { return nil }
        return projectPath
    }

    /// Whether the absolute `path` is shared by this project: its one file, or anything strictly
    /// inside its folder.
    func holds(_ path: String) -> Bool {
        if let file { return path == absolute(file) }
        return path.hasPrefix(root + "/")
    }
}
