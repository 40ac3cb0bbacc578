// Documents/: a shared document, its sharing record, file binding and element room.
// May call: ReplicatingTypes and QuireProtocol only.
import QuireProtocol
import ReplicatingTypes

/// One document the daemon holds: the authoritative replicated text that every editor session
/// and peer contributes to, and the selections of the sessions that have it open.
///
/// Guarantees: `text` holds every operation any session or peer contributed, each applied
/// once; the document never makes edits of its own, so every element is attributable to the
/// session or peer replica that typed it.
final class SharedDocument {
    /// Where a selection end sits: before everything, or right after an element (which may
    /// since have been removed, in which case it sits where its tombstone is).
    enum Anchor: Equatable {
        case start
        case after(ElementID)
    }

    struct RemoteSelection {
        var user: WireUser
        var selections: [(anchor: Anchor, head: Anchor)]
        /// For a session here: how many cursor updates the session had sent when it sent this
        /// one (in any document), so the most recent of its cursors is known (`quire/who`).
        var moved: UInt64 = 0
    }

    /// An editor on another daemon: its selections, the latest `sequence` its daemon numbered
    /// them with (older or repeated ones are dropped), the link they came by, and the number
    /// editors here know it by (`cursor/update`'s `session`).
    struct PeerPresence {
        var selection: RemoteSelection
        var sequence: UInt64
        var viaLink: Int
        var number: Int
    }

    let uri: String
    /// Tells apart documents created independently under the same name (on different daemons).
    let id: UInt64
    private(set) var text: ReplicatingText
    /// Selections by session id.
    var selections: [Int: RemoteSelection] = [:]
    /// Editors on other daemons, by origin (`"<replica>:<session>"`).
    var peerPresences: [String: PeerPresence] = [:]
    /// The file the document is bound to, if any.
    var file: FileBinding?
    /// Whether a peer ever held this document. Until one has, every copy that can edit it is
    /// on this daemon, so this daemon alone decides which tombstones can go.
    var everShared = false
    /// The peer daemons known to hold this document and where its copies stand (persisted): a
    /// stability round must reach every holder before a tombstone can go.
    var sharing = DocumentSharing()
    /// The latest editor edits applied, by `editId` (kept durably with them by the store).
    var appliedEditIDs = RecentEditIDs()
    /// Grows with every change of `text` (operations applied, a state adopted): what a digest
    /// was computed for (`DocumentDigest`).
    private(set) var revision: UInt64 = 0
    /// The digest of `text` at `revision`, once asked for.
    var cachedDigest: (revision: UInt64, digest: DocumentDigest)?
    /// Told of every move of `revision` (set by the registry that holds the document).
    weak var changes: DocumentChanges?

    init(uri: String, id: UInt64, text: ReplicatingText) {
        self.uri = uri
        self.id = id
        self.text = text
    }

    /// Never edited anywhere and bound to no file: an editor opened the name and nothing more
    /// (here or on a peer that announced it). A document of the same name with edits takes its
    /// place, as does an equally empty one with a smaller ID, so everyone ends on one.
    var isPristine: Bool {
        text.versionVector.counts.isEmpty && file == nil
    }

    /// Drops the tombstones outside `keep`; returns how many elements went.
    func dropTombstones(in candidates: [ElementIDRange]? = nil, keeping keep: [ElementIDRange]) -> Int {
        let dropped = text.dropTombstones(in: candidates, keeping: keep)
        if dropped > 0 { changes?.compacted(self) }
        return dropped
    }

    /// Takes a whole state a peer sent in place of an empty copy.
    func adopt(_ state: ReplicatingText) {
        text = state
        revision &+= 1
        changes?.changed(self)
    }

    /// Elements the remote selections sit after, which must stay stored to place them.
    var selectionAnchors: [ElementIDRange] {
        var ids: [ElementIDRange] = []
        for selection in Array(selections.values) + peerPresences.values.map(\.selection) {
            for (anchor, head) in selection.selections {
                for case .after(let id) in [anchor, head] { ids.append(ElementIDRange(start: id, count: 1)) }
            }
        }
        return ids
    }

    /// Applies operations a session or peer made. - Complexity: O(k log n)
    func apply(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>]) {
        for op in operations { text.integrate(op) }
        if !operations.isEmpty {
            revision &+= 1
            changes?.changed(self)
        }
    }

    /// Applies, one at a time, the operations of a batch that change this document, each judged
    /// (`isNew`) against the state the earlier ones of the batch left; returns those, in order
    /// (what is worth logging and relaying). An insertion and the removal of what it inserted,
    /// in one batch, are both new and both applied.
    /// - Complexity: O(k log n) for k operations.
    func applyNew(_ operations: [ReplicatingArrayOperation<Unicode.Scalar>]) -> [ReplicatingArrayOperation<Unicode.Scalar>] {
        var applied: [ReplicatingArrayOperation<Unicode.Scalar>] = []
        for op in operations where isNew(op) {
            text.integrate(op)
            applied.append(op)
        }
        if !applied.isEmpty {
            revision &+= 1
            changes?.changed(self)
        }
        return applied
    }

    /// Why `operation` contradicts what this document holds, beyond what the CRDT checks: an
    /// insertion reusing IDs of visible characters with other characters. Nil when consistent.
    /// - Complexity: O(k log n) for the k elements already known.
    func contentConflict(_ operation: ReplicatingArrayOperation<Unicode.Scalar>) -> String? {
        guard case .insert(let insertion) = operation, case .elements(let content) = insertion.content else { return nil }
        for (i, scalar) in content.enumerated() {
            let id = ElementID(replica: insertion.id.replica, counter: insertion.id.counter + UInt64(i))
            guard text.scalars.contains(id) else { break }
            if let index = text.scalars.index(of: id), text.scalars[index] != scalar {
                return "element \(id) is already \(text.scalars[index].escaped(asASCII: true)), not \(scalar.escaped(asASCII: true))"
            }
        }
        return nil
    }

    /// Whether `operation` would change this document (so it is worth relaying): an insertion
    /// whose last element is not here yet, or a removal of an element still visible.
    func isNew(_ operation: ReplicatingArrayOperation<Unicode.Scalar>) -> Bool {
        switch operation {
        case .insert(let insertion):
            guard insertion.count > 0 else { return false }
            return !text.scalars.contains(ElementID(replica: insertion.id.replica, counter: insertion.id.counter + UInt64(insertion.count) - 1))
        case .remove(let ranges):
            var budget = 1 << 20
            for range in ranges {
                for counter in range.counters {
                    if text.scalars.index(of: ElementID(replica: range.start.replica, counter: counter)) != nil { return true }
                    budget -= 1
                    if budget == 0 { return true }   // too large to check cheaply: apply and relay it
                }
            }
            return false
        }
    }

    /// The anchor of scalar offset `offset` in `view`.
    static func anchor(ofOffset offset: Int, in view: ReplicatingText) -> Anchor {
        offset == 0 ? .start : .after(view.scalars.id(at: offset - 1))
    }

    /// The scalar offset of `anchor` in `view`, or nil when `view` does not have its element yet.
    static func offset(of anchor: Anchor, in view: ReplicatingText) -> Int? {
        switch anchor {
        case .start: return 0
        case .after(let id): return view.scalars.index(after: id)
        }
    }
}
