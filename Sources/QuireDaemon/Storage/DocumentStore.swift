// Storage/: the data directory (replica ID, lock, per-document log and snapshots, recovery of
// editor views). May call: Documents, the view state types of Editor/ (`EditorView`,
// `DetachedView`, which it stores) and ReplicatingTypes; never the core or the sessions.
import Foundation
import Logging
import ReplicatingTypes

/// The daemon's data directory: the replica ID it keeps across restarts, a lock so that one
/// daemon at a time owns it, and one `DocumentFiles` per document under `documents/`.
///
/// Guarantees: with `.sync` durability, `commit()` returns only once every operation appended
/// before it is on stable storage, and `holdsOutput` tells the daemon to keep every reply,
/// edit and peer frame back until then. With `.batch`, operations reach the kernel at once
/// (they survive `kill -9`) and stable storage at the next `commit()`, which the server calls
/// on a timer. A document whose files cannot be read is logged and skipped; the others load.
public final class DocumentStore {
    /// When an edit is on stable storage relative to its acknowledgement.
    public enum Durability: String, Sendable, CaseIterable {
        /// Synced before the editor or anyone else hears of it (one fdatasync per read batch).
        case sync
        /// Written at once, synced every `batchInterval`; acknowledged before the sync.
        case batch
    }

    /// How often `.batch` durability syncs.
    public static let batchInterval = 0.2

    public let path: String
    public let durability: Durability
    /// This daemon's identity, the same after every restart.
    public let replica: ReplicaID
    /// The key this daemon signs peer handshakes with, the same after every restart.
    public let identity: PeerIdentity
    /// A document's log grows to at least this many bytes before it is folded into a snapshot.
    public let snapshotLogBytes: Int
    let logger: Logger
    private let lockDescriptor: Int32
    var files: [UInt64: DocumentFiles] = [:]
    var unsynced: Set<UInt64> = []
    /// Documents were created since the last commit: the documents directory's entries wait
    /// for their sync (one for all of them).
    var documentsDirectoryUnsynced = false
    /// Documents appended to since snapshots were last considered.
    private var grown: Set<UInt64> = []
    /// Documents whose segment is open, least recently written first.
    private var openOrder: [UInt64] = []
    /// Segments kept open at most; the least recently written beyond that are synced and closed.
    static let maximumOpenSegments = 64
    /// Keeps new documents in packs and gives them their own files on a thread of its own.
    let maker: DocumentFilesMaker
    /// Documents the store made itself from their pack (to touch them): their pack waits for
    /// the commit that syncs their files.
    var madeSinceCommit: Set<UInt64> = []
    /// Runs a commit's document syncs together (`ParallelSyncs`).
    let syncs = ParallelSyncs(width: DocumentStore.parallelSyncs)
    /// Document syncs a commit runs at once at most.
    static let parallelSyncs = 16
    /// The first write that failed; from then on the store keeps nothing more.
    public private(set) var failure: String?

    var documentsPath: String { path + "/documents" }
    var packsPath: String { path + "/" + DocumentPack.directoryName }

    /// Opens (creating when needed, mode 0700) and locks the data directory at `path`.
    /// Throws when another daemon holds it, it cannot be made, or it is not the user's own
    /// (`OwnedFiles`): a directory of another user's or open to writes by group or others,
    /// a symbolic link for `lock`, `replica` or `identity`, or a key readable by others.
    public init(path: String, durability: Durability = .sync, snapshotLogBytes: Int = 1 << 20, logger: Logger) throws {
        self.path = path
        self.snapshotLogBytes = snapshotLogBytes
        self.durability = durability
        self.logger = logger
        try FileSystem.makeDirectory(path)
        try OwnedFiles.checkDirectory(path)
        try FileSystem.makeDirectory(path + "/documents")
        try OwnedFiles.checkDirectory(path + "/documents", what: "the documents directory")
        let packs = path + "/" + DocumentPack.directoryName
        try FileSystem.makeDirectory(packs)
        try OwnedFiles.checkDirectory(packs, what: "the packs directory")
        let leftPacks = DocumentFiles.numbers(in: try FileSystem.list(packs), prefix: "pack")
        maker = DocumentFilesMaker(packsPath: packs, documentsPath: path + "/documents", firstNumber: (leftPacks.last ?? 0) + 1)
        let lock = try Self.lock(path + "/lock")
        do {
            replica = try Self.loadReplica(path + "/replica", logger: logger)
            identity = try Self.loadIdentity(path + "/identity", logger: logger)
        } catch {
            close(lock)
            throw error
        }
        lockDescriptor = lock
    }

    deinit {
        // New documents get their own files before the directory is let go (their pack is
        // removed then); a document that could not be made stays in its pack for the next load.
        maker.finish()
        close(lockDescriptor)
    }

    /// The identity kept in `identityPath` (its 32-byte private key, mode 0600), made when missing.
    /// A key that is not a regular file of the user's, or that group or others may read, is
    /// refused (`OwnedFiles`), never used or re-permissioned.
    private static func loadIdentity(_ identityPath: String, logger: Logger) throws -> PeerIdentity {
        if let bytes = try OwnedFiles.read(identityPath, secret: true, limit: 4096) {
            if let identity = try? PeerIdentity(rawRepresentation: bytes) { return identity }
            logger.warning("\(identityPath) is damaged; this daemon takes a new identity key (peers that pinned the old one will refuse it)")
        }
        let identity = PeerIdentity()
        try FileSystem.writeAtomically(identity.rawRepresentation, to: identityPath, mode: 0o600)
        return identity
    }

    /// The replica ID kept in `replicaPath`, made when missing; read without following a link.
    private static func loadReplica(_ replicaPath: String, logger: Logger) throws -> ReplicaID {
        if let bytes = try OwnedFiles.read(replicaPath, limit: 4096) {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if let value = UInt64(text), value != 0 { return ReplicaID(value) }
            logger.warning("\(replicaPath) is damaged; this daemon takes a new replica ID")
        }
        let replica = ReplicaID(UInt64.random(in: 1...UInt64.max))
        try FileSystem.writeAtomically(Array("\(replica.rawValue)\n".utf8), to: replicaPath)
        return replica
    }

    // MARK: Documents

    /// A document read back from disk.
    public struct LoadedDocument {
        public let uri: String
        public let id: UInt64
        public let text: ReplicatingText
        public let operationCount: Int
        let binding: FileBinding?
        /// Whether a peer ever held the document, and the peer daemons known to hold it.
        let shared: Bool
        let sharing: DocumentSharing
        /// The latest editor edits applied, by ID.
        let editIDs: RecentEditIDs
    }

    /// Every document in the data directory, each from its newest intact state. Damage is
    /// logged as a warning saying what was dropped; an unreadable document is logged and skipped.
    public func loadDocuments() -> [LoadedDocument] {
        loadDocuments(rebuildingViews: { _, _ in nil })
    }

    /// `loadDocuments()`, with `views(uri, id)` rebuilding the editor views of each document as
    /// its log is replayed. Documents that a pack holds and whose own files were not made (or
    /// not finished) are made from the pack first (`makeDocumentsOfPacks`).
    func loadDocuments(rebuildingViews views: (String, UInt64) -> ViewReplay?) -> [LoadedDocument] {
        removeUnfinishedDirectories()
        makeDocumentsOfPacks()
        let names: [String]
        do { names = try FileSystem.list(documentsPath).sorted() } catch {
            logger.error("cannot list \(documentsPath): \(error)")
            return []
        }
        var loaded: [LoadedDocument] = []
        for name in names where !name.hasSuffix(DocumentFiles.unfinishedSuffix) {
            let directory = documentsPath + "/" + name
            do {
                try OwnedFiles.checkDirectory(directory, what: "the document directory")
                let recovered = try DocumentFiles.recover(directory, replica: replica, views: views)
                recovered.files.minimumLogBytesBeforeSnapshot = snapshotLogBytes
                for warning in recovered.warnings { logger.warning("document \(recovered.files.uri): \(warning)") }
                files[recovered.files.id] = recovered.files
                loaded.append(LoadedDocument(uri: recovered.files.uri, id: recovered.files.id, text: recovered.text,
                                             operationCount: recovered.operationCount, binding: recovered.binding,
                                             shared: recovered.shared, sharing: recovered.sharing,
                                             editIDs: recovered.files.editIDs))
            } catch {
                logger.error("skipping \(directory): \(error)")
            }
        }
        return loaded
    }

    /// Starts keeping a new document, with `initial` (its operations so far) as the first record.
    /// The record goes into the current pack (`DocumentFilesMaker`): at once under `.batch`, at
    /// the next `commit()` under `.sync` (nothing tells of the document before it), which syncs
    /// the pack with everything else: a burst of new documents (a project opened) costs one file
    /// and one sync. Each document's own directory and files are made afterwards, off the reply
    /// path; a document whose own files are needed before the commit never goes into the pack.
    public func create(uri: String, id: UInt64, initial: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        guard failure == nil, files[id] == nil else { return }
        attempt("create \(uri)") {
            let records = DocumentFiles.firstRecords(initial)
            let created = DocumentFiles.packed(under: documentsPath, uri: uri, id: id, firstRecordBytes: records.count)
            created.minimumLogBytesBeforeSnapshot = snapshotLogBytes
            created.packedWrite = { [unowned self] files, record in try writePacked(record, of: files) }
            try maker.create(id: id, uri: uri, directory: created.directory, records: records, deferred: durability == .sync)
            files[id] = created
        }
    }

    /// Stops keeping document `id` and removes its files (a new, empty document that a peer's
    /// document of the same name replaced); its pack, while on disk, records that it went.
    public func discard(documentID id: UInt64) {
        guard let documentFiles = files.removeValue(forKey: id) else { return }
        unsynced.remove(id)
        grown.remove(id)
        openOrder.removeAll { $0 == id }
        madeSinceCommit.remove(id)
        var hasFiles = !documentFiles.isUnmade
        do {
            if documentFiles.isUnmade, case .made = try maker.claim(id) { hasFiles = true }
            try maker.discard(id)
        } catch {
            logger.warning("cannot record that the empty \(documentFiles.uri) went (\(error)); after a restart it shows as \(documentFiles.uri)#id")
        }
        guard hasFiles else { return }
        do {
            documentFiles.closeUnsynced()   // going: nothing of it needs to be durable
            try FileManager.default.removeItem(atPath: documentFiles.directory)
        } catch {
            logger.warning("cannot remove the files of the empty \(documentFiles.uri) (\(error)); after a restart it shows as \(documentFiles.uri)#id")
        }
    }

    /// Logs operations applied to document `id`; `editID` names the editor edit they make up.
    public func append(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>], toDocument id: UInt64, editID: String? = nil) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("log edits of \(documentFiles.uri)") {
            try documentFiles.append(operations, editID: editID)
            try afterAppend(documentFiles)
        }
    }

    /// Logs what happened to an editor's view of document `id` (an edit's operations with it).
    func append(_ event: ViewEvent, toDocument id: UInt64, editID: String? = nil,
                operations: [ReplicatingArrayOperation<Unicode.Scalar>] = []) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("log an editor view of \(documentFiles.uri)") {
            try documentFiles.append(event, editID: editID, operations: operations)
            try afterAppend(documentFiles)
        }
    }

    /// Records document `id`'s file binding (nil: none), as a record of its log
    /// (`DocumentFiles+Records`): durable as an edit is, and a document still in its pack stays
    /// there. `baseIsText`: the binding's base is the document's text as logged so far, which
    /// the record then does not copy.
    func record(_ binding: FileBinding?, forDocument id: UInt64, baseIsText: Bool = false) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("record the file binding of \(documentFiles.uri)") {
            try documentFiles.writeBinding(binding, baseIsText: baseIsText)
            try afterAppend(documentFiles)
        }
    }

    private func afterAppend(_ documentFiles: DocumentFiles) throws {
        maker.noteActivity()
        grown.insert(documentFiles.id)
        guard !documentFiles.isUnmade else { return }   // in its pack, which the commit syncs
        unsynced.insert(documentFiles.id)
        if let index = openOrder.lastIndex(of: documentFiles.id) { openOrder.remove(at: index) }
        openOrder.append(documentFiles.id)
        while openOrder.count > Self.maximumOpenSegments {
            // Closed unsynced (it stays in `unsynced`): the commit reopens it to sync it, so a
            // read that writes to many documents pays no sync until its commit.
            let oldest = openOrder.removeFirst()
            files[oldest]?.closeUnsynced()
        }
    }

    /// Documents whose log segment holds an open descriptor now.
    var openSegmentCount: Int { files.values.filter(\.isOpen).count }

    /// Records who holds document `id` and where its copies stand, as a record of its log
    /// (`DocumentFiles+Records`): a project's documents shared or joined at once are not each
    /// given a file (nor taken out of their pack) on the reply path.
    func recordSharing(_ sharing: DocumentSharing, forDocument id: UInt64) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("record who holds \(documentFiles.uri)") {
            try documentFiles.recordSharing(sharing)
            try afterAppend(documentFiles)
        }
    }

    /// Takes `text`, a whole state a peer sent (not operations), as document `id` from here on:
    /// a state record in its log (`DocumentFiles+Records`), durable as an edit is; a document
    /// still in its pack stays there. A later snapshot folds it in as any other record.
    func adopt(_ text: ReplicatingText, forDocument id: UInt64) {
        guard failure == nil, let documentFiles = files[id] else { return }
        attempt("store the state of \(documentFiles.uri)") {
            try documentFiles.adopt(text)
            try afterAppend(documentFiles)
        }
    }

    /// Snapshots every document whose log has grown enough; `text(id)` gives its current state.
    public func snapshotDueDocuments(text: (UInt64) -> ReplicatingText?) {
        snapshotDueDocuments(withViews: { id in text(id).map { ($0, []) } })
    }

    /// `snapshotDueDocuments(text:)`, where `text(id)` also gives the states of the document's
    /// editor views, which the snapshot keeps.
    func snapshotDueDocuments(withViews text: (UInt64) -> (text: ReplicatingText, views: [[UInt8]])?) {
        guard failure == nil, !grown.isEmpty else { return }
        let candidates = grown
        grown = []
        for id in candidates.sorted() {
            guard let documentFiles = files[id], documentFiles.isSnapshotDue, let current = text(id),
                  settledFiles(id) != nil else { continue }
            attempt("snapshot \(documentFiles.uri)") { try documentFiles.writeSnapshot(of: current.text, views: current.views) }
        }
    }

    /// Runs `body`; its first failure stops the store (later writes could follow a torn record).
    func attempt(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch {
            failure = "cannot \(what) in \(path): \(error); edits from now on are kept in memory only"
            logger.error("\(failure ?? "")")
        }
    }
}
