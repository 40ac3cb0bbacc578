import Logging
import ReplicatingTypes

/// Lends the replica IDs local edits are made as (`LocalReplicas`), keeps the pool across
/// restarts, and catches a peer that claims more edits of them than were made.
/// May call: the editors (the replicas their views edit as), the view keeper (the replicas kept
/// views will want back) and the store.
final class ReplicaLender {
    /// The pool (`LocalReplicas`): pooled, retired and used-once replicas of this daemon.
    let pool: LocalReplicas
    private let logger: Logger
    private let store: DocumentStore?
    private unowned let sessions: SessionRegistry
    private unowned let views: ViewKeeper

    /// `mint`: draws a replica ID when none of those already used fits.
    init(logger: Logger, store: DocumentStore?, mint: @escaping () -> ReplicaID, sessions: SessionRegistry, views: ViewKeeper) {
        self.logger = logger
        self.store = store
        self.sessions = sessions
        self.views = views
        pool = LocalReplicas(pooled: store?.loadLocalReplicas() ?? [], mint: mint)
    }

    /// From now on a changed pool is kept for the next run (called once the store is loaded).
    func startRecording() {
        pool.onChange = { [unowned self] replicas in self.record(replicas) }
    }

    /// The replica to make edits of `document` as on `copy` (nil: a fresh copy of the document
    /// itself, edited and contributed before anything else happens): never one a live view of
    /// the document edits as, nor one a kept view of it will want back, and one whose elements
    /// `copy` holds all of (`LocalReplicas.pick`).
    func replica(forEditing copy: ReplicatingText?, of document: SharedDocument, preferring: ReplicaID? = nil) -> ReplicaID {
        var avoiding = Set(sessions.sessions.values.compactMap { $0.view(of: document.uri)?.replica })
        for view in views.dormantViews.views(of: document.id) where view.replica != preferring { avoiding.insert(view.replica) }
        return pool.pick(forEditing: copy, of: document.text, avoiding: avoiding, preferring: preferring)
    }

    /// A description of a count in `vector` for one of this daemon's own replicas that exceeds
    /// what `document` holds: edits that were never made.
    func impossibleClaim(in vector: VersionVector, for document: SharedDocument) -> String? {
        let have = document.text.versionVector
        for (replica, count) in vector.counts where pool.own.contains(replica) && count > have[replica] {
            return "\(count) edits of replica \(replica) claimed, \(have[replica]) made"
        }
        return nil
    }

    /// The store failed: from now on edits reach peers without being logged, so no replica used
    /// until now may be continued after a restart (the log would lack what peers hold). The
    /// pool is emptied here and its file removed (an unlink needs no room on a full disk).
    func forgetPool(of store: DocumentStore) {
        pool.onChange = { _ in }   // nothing used from now on is kept for a restart
        pool.retire(Set(pool.pooled))
        store.forgetLocalReplicas()
    }

    /// Keeps the pool for the next run; a failure costs only reuse after a restart.
    private func record(_ replicas: [ReplicaID]) {
        do { try store?.recordLocalReplicas(replicas) } catch {
            logger.warning("the replica pool could not be kept (\(error)); a restart makes new replica IDs")
        }
    }
}
