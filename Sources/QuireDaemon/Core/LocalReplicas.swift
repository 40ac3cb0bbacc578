import ReplicatingTypes

/// The replica IDs this daemon's local edits are made as (editor views, undo, merges, a bound
/// file's outside changes), reused across sessions so that a document edited for years by
/// thousands of editor sessions names only a handful of this daemon's replicas, far below the
/// per-document bound peers hold it to (protocol/decisions/replica-reuse.md).
///
/// Rule: an edit made as replica `R` on a copy of a document takes `R`'s next counters in that
/// copy. Two different operations must never take the same element ID, so `R` is lent for an
/// edit on a copy only when that copy holds every element of `R` the document holds (then the
/// counters continue past everything of `R` anywhere: in sync durability nothing of `R` exists
/// outside what this daemon logged) and no live editor view of the document edits as `R` (its
/// copy would lack what the edit makes). `pick` enforces both; a replica not in the pool is
/// minted (and recorded, so a restart reuses it too).
///
/// Guarantees: a replica of the pool is never lent twice at once for one document; the pool
/// holds at most `maximumReplicas` (past it, replicas minted are used once and not pooled, so
/// a pathological run cannot grow the pool without bound); replicas taken out (`retire`) are
/// never lent again.
final class LocalReplicas {
    /// Replicas pooled at most.
    static let maximumReplicas = 256

    /// In the order they were minted: the first that fits is lent, so few are used.
    private(set) var pooled: [ReplicaID]
    /// Every replica this daemon made edits as (pooled, retired or used once), for
    /// `ReplicaLender.impossibleClaim`.
    private(set) var own: Set<ReplicaID>
    private let mint: () -> ReplicaID
    /// Called with the pool after it changed, to keep it across restarts.
    var onChange: ([ReplicaID]) -> Void = { _ in }

    /// `pooled`: replicas kept from the previous run (`DocumentStore.localReplicas`), lent again.
    init(pooled: [ReplicaID] = [], mint: @escaping () -> ReplicaID) {
        self.pooled = Array(pooled.prefix(Self.maximumReplicas))
        self.own = Set(pooled)
        self.mint = mint
    }

    /// A replica to edit `copy` (nil: a fresh copy of `document` itself) as, for operations that
    /// go into `document`: one whose elements in `copy` are all of its elements in `document`,
    /// and not in `avoiding` (the replicas live editor views of the document edit as, and those
    /// kept views will want back). `preferring` is tried first (a returning view's own replica).
    /// - Complexity: O(pool + replicas of the document)
    func pick(forEditing copy: ReplicatingText?, of document: ReplicatingText, avoiding: Set<ReplicaID>,
              preferring: ReplicaID? = nil) -> ReplicaID {
        let held = document.versionVector
        let shown = copy?.versionVector
        func fits(_ replica: ReplicaID) -> Bool {
            replica.rawValue != 0 && !avoiding.contains(replica) && (shown.map { $0[replica] == held[replica] } ?? true)
        }
        if let preferring, own.contains(preferring), fits(preferring) { return preferring }
        if let replica = pooled.first(where: fits) { return replica }
        var replica = mint()
        while replica.rawValue == 0 || own.contains(replica) || held[replica] > 0 { replica = mint() }
        own.insert(replica)
        if pooled.count < Self.maximumReplicas {
            pooled.append(replica)
            onChange(pooled)
        }
        return replica
    }

    /// Takes `replicas` out of the pool for good: their counters may run behind what some copy
    /// elsewhere once held (a rebase replaced the document's history).
    func retire(_ replicas: Set<ReplicaID>) {
        let before = pooled.count
        pooled.removeAll { replicas.contains($0) }
        if pooled.count != before { onChange(pooled) }
    }
}
