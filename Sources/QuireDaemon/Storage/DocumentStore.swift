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
    var grown: Set<UInt64> = []
    /// Documents whose segment is open, least recently written first.
    var openOrder: [UInt64] = []
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

    /// Runs `body`; its first failure stops the store (later writes could follow a torn record).
    func attempt(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch {
            failure = "cannot \(what) in \(path): \(error); edits from now on are kept in memory only"
            logger.error("\(failure ?? "")")
        }
    }
}
