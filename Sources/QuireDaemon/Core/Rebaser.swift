import Logging
import ReplicatingTypes

/// Moves a document's copy onto another history: a peer's state, when this copy predates a
/// retiring round it was not part of. May call: the editors (is it open?), the file binder, the
/// view keeper, the document registry (sharing records), the store and the replica lender.
final class Rebaser {
    private let logger: Logger
    private let store: DocumentStore?
    private let replica: ReplicaID
    private let replicas: ReplicaLender
    private unowned let sessions: any EditorNotifier
    private unowned let files: FileBinder
    private unowned let views: ViewKeeper
    private unowned let documents: DocumentRegistry

    init(logger: Logger, store: DocumentStore?, replica: ReplicaID, replicas: ReplicaLender, sessions: any EditorNotifier,
         files: FileBinder, views: ViewKeeper, documents: DocumentRegistry) {
        self.logger = logger
        self.store = store
        self.replica = replica
        self.replicas = replicas
        self.sessions = sessions
        self.files = files
        self.views = views
        self.documents = documents
    }

    /// Rebases `document`, whose copy predates a retiring round this daemon was not part of,
    /// onto `state`, the copy of a daemon that took part (protocol/decisions/tombstones.md).
    ///
    /// This copy's insertions and removals that the state lacks keep their IDs where they can be
    /// placed. Those anchored to elements the state has dropped are carried over as a three-way
    /// text merge, as new text of a fresh replica, so nothing typed here is lost and no operation
    /// anchored to a dropped element ever leaves this daemon. Returns false, changing nothing,
    /// while an editor has the document open (its view cannot move to another history).
    func rebase(_ document: SharedDocument, onto state: ReplicatingText, epochs: Set<String>, from link: any PeerEndpoint) -> Bool {
        guard !sessions.isOpen(document) else {
            logger.warning("document \(document.uri): not rebased onto peer link \(link.id)'s state while an editor has it open; it is kept apart until the next link after it is closed")
            return false
        }
        // A bound file's outside changes go in first, on the history its base belongs to.
        if document.file != nil {
            do { try files.mergeOutsideChanges(of: document) } catch {
                logger.warning("document \(document.uri): outside changes to its file not merged before the rebase: \(error.message)")
            }
        }
        let old = document.text
        var merged = state
        var carried = 0
        var unplaceable: [ElementIDRange] = []
        for operation in old.operations(since: state.versionVector) {
            switch operation {
            case .insert(let insertion):
                // Placeable: its anchor is here and not dropped, and no earlier element of its
                // replica was left out (a replica's counters must arrive without gaps).
                let anchorPlaced = insertion.anchor.map { merged.scalars.contains($0) && !merged.scalars.isCompacted($0) } ?? true
                let noGap = merged.versionVector[insertion.id.replica] >= insertion.id.counter
                if anchorPlaced, noGap, merged.scalars.validationError(for: operation) == nil {
                    merged.integrate(operation)
                    carried += 1
                } else {
                    unplaceable.append(ElementIDRange(start: insertion.id, count: UInt64(insertion.count)))
                }
            case .remove(let ranges):
                let known = ranges.flatMap { range in
                    range.count == 0 || !merged.scalars.contains(range.start) ? [] : [ElementIDRange(
                        start: range.start, count: Swift.min(range.count, merged.versionVector[range.start.replica] - range.start.counter))]
                }
                if !known.isEmpty { merged.integrate(.remove(ElementIDRanges(known))) }
            }
        }
        // What could not keep its IDs: this copy's text minus those elements is the base, so
        // exactly their text is carried over (and what either side removed stays removed).
        let skipped = ElementIDRangeSet(unplaceable)
        var base: [Unicode.Scalar] = []
        let scalars = old.scalars.elements
        var offset = 0
        for range in old.scalars.visibleIDs {
            for piece in skipped.complement(of: range) {
                let from = offset + Int(piece.start.counter - range.start.counter)
                base += scalars[from..<(from + Int(piece.count))]
            }
            offset += Int(range.count)
        }
        let edits = TextMerge.edits(base: base, current: merged.scalars.elements, incoming: scalars)
        // Replicas of ours this history holds fewer elements of than the old one did: some copy
        // may still hold those, so their counters are never continued (protocol/decisions/replica-reuse.md).
        let merging = merged.versionVector
        replicas.pool.retire(Set(old.versionVector.counts.filter { merging[$0.key] < $0.value }.keys))
        merged.replica = replicas.pool.pick(forEditing: nil, of: merged, avoiding: [])
        for edit in edits.reversed() where edit.range.upperBound <= merged.count { merged.replace(edit.range, with: edit.replacement) }
        merged.replica = replica
        document.adopt(merged)
        // Kept views show the old history; their editors' reopens merge as text.
        views.detachDormantViews(of: document)
        documents.markShared(document, holder: link.peerReplica) { $0.epochs.formUnion(epochs) }
        store?.adopt(document.text, forDocument: document.id)
        // Peer traffic never writes files: the file keeps what its user last saved; its base
        // stays in the old history, so a change made to it outside Quire is merged as text
        // (`mergeOutsideChanges`), and the next save writes the rebased text.
        logger.info("document \(document.uri): rebased onto peer link \(link.id)'s state; \(carried) operations kept their IDs, \(edits.count) edits carried over as text")
        return true
    }
}
