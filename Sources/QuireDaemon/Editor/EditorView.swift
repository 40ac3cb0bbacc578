import QuireProtocol
import ReplicatingTypes

/// One editor's view of one shared document, and the revision bookkeeping that lets editor and
/// daemon edit at the same time without operational transforms (protocol/decisions/revisions.md).
///
/// Model: `confirmed` is exactly the text the editor is known to show: every daemon edit it has
/// confirmed (by basing an edit of its own on it) plus its own edits, as CRDT elements with
/// their IDs. `sent` is `confirmed` plus the daemon edits sent but not yet confirmed. Operations
/// the editor has not been sent wait in `unsent`.
///
/// Invariants:
/// 1. `confirmedRevision <= sentRevision`; `pending` holds the daemon edits numbered
///    `confirmedRevision + 1 ... sentRevision`, in order.
/// 2. `sent` equals `confirmed` with every pending edit's operations applied.
/// 3. Every operation of the document is in `confirmed`, in a pending edit, or in `unsent`.
///
/// An editor edit based on daemon revision `d` confirms pending edits up to `d`; the editor
/// drops the later ones (they were made before it sent its edit), so their operations go back
/// to `unsent` and are sent again, positioned in the text the editor really has.
final class EditorView {
    typealias Operation = ReplicatingArrayOperation<Unicode.Scalar>

    let uri: String
    let encoding: PositionEncoding
    private(set) var epoch = 0
    private(set) var confirmed: ReplicatingText
    /// A separate copy while it differs from `confirmed`, kept afterwards so that steady editing
    /// never copies the text; dropped (and rebuilt) only when the editor drops daemon edits.
    private var sentCopy: ReplicatingText?
    private var pending: [(revision: Int, operations: [Operation])] = []
    private var unsent: [Operation] = []
    private(set) var sentRevision = 0
    private(set) var confirmedRevision = 0
    private(set) var editorRevision = 0
    /// Why an editor edit of this epoch was refused: every later edit of the epoch was based on
    /// it, so they are refused too until a resync starts a new epoch.
    private(set) var refusal: String?

    init(uri: String, text: ReplicatingText, replica: ReplicaID, encoding: PositionEncoding) {
        self.uri = uri
        self.encoding = encoding
        confirmed = text
        confirmed.replica = replica
    }

    /// What has been sent to the editor: its text once it applies every pending edit.
    var sent: ReplicatingText { sentCopy ?? confirmed }

    var hasUnsentOperations: Bool { !unsent.isEmpty }

    /// Elements this view's copies show, which its editor's next edits may be anchored to: the
    /// document must keep them even where it has removed them.
    var referencedIDs: [ElementIDRange] {
        confirmed.scalars.visibleIDs + (sentCopy?.scalars.visibleIDs ?? [])
    }

    /// Operations that reached the document from elsewhere; sent at the next `makeDaemonEdit`.
    func enqueue(_ operations: [Operation]) {
        unsent.append(contentsOf: operations)
    }

    /// Applies an editor edit based on daemon revision `revision` of `epoch`; returns the
    /// operations for the document. Throws, changing nothing, when the revision or a change does
    /// not fit, and from then on refuses the epoch's later edits (`ResponseError.resyncNeeded`).
    /// `cursor` is where the editor's cursor is after the last change.
    /// - Complexity: O(changed lines + k log n); O(n) when daemon edits were dropped or
    /// the edit holds several changes (each validated on a copy first).
    func applyEditorEdit(epoch: Int, revision: Int, changes: [WireChange], cursor: WirePosition? = nil) throws(ResponseError) -> [Operation] {
        guard epoch == self.epoch else { throw .staleEpoch(got: epoch, current: self.epoch) }
        if let refusal { throw .resyncNeeded(epoch: epoch, reason: refusal) }
        do {
            return try resolveEditorEdit(revision: revision, changes: changes,
                                         cursor: cursor.map { TextPosition(line: $0.line, character: $0.character) })
        } catch {
            refusal = error.message
            throw error
        }
    }

    private func resolveEditorEdit(revision: Int, changes: [WireChange], cursor: TextPosition?) throws(ResponseError) -> [Operation] {
        guard revision <= sentRevision else { throw .revisionFromFuture(got: revision, latest: sentRevision) }
        guard revision >= confirmedRevision else {
            throw .invalidParams("params.revision: \(revision) is older than revision \(confirmedRevision), which this editor already confirmed")
        }
        // The editor showed confirmed plus the pending edits up to `revision`: confirm them. Later
        // pending edits were based on an older editor revision, so the editor drops them: their
        // operations go back to `unsent`. This bookkeeping holds whether or not the changes fit.
        let confirming = pending.prefix { $0.revision <= revision }.count
        for edit in pending[..<confirming] { for op in edit.operations { confirmed.integrate(op) } }
        if confirming < pending.count {
            unsent = pending[confirming...].flatMap(\.operations) + unsent
            sentCopy = nil
            sentRevision = revision
        }
        pending = []
        confirmedRevision = revision
        // Resolve the changes against exactly that text. A single change is validated before it
        // modifies anything; several are tried on a copy so a bad one leaves no trace.
        var operations: [Operation] = []
        if changes.count == 1 {
            operations = try ChangeResolver.apply(changes[0], to: &confirmed, encoding: encoding, cursor: cursor)
        } else if changes.count > 1 {
            var scratch = confirmed
            for (index, change) in changes.enumerated() {
                let last = index == changes.count - 1
                operations.append(contentsOf: try ChangeResolver.apply(change, to: &scratch, encoding: encoding, cursor: last ? cursor : nil))
            }
            confirmed = scratch
        }
        for op in operations { sentCopy?.integrate(op) }
        editorRevision += 1
        return operations
    }

    /// Sends what the editor has not seen: applies `unsent` to `sent` and returns the editor's
    /// changes, positioned in its text and applied in order; nil when nothing visible changed.
    /// - Complexity: O(k log n) for k operations (plus O(n) to hash when `hashLimit` allows).
    func makeDaemonEdit(hashLimit: Int) -> EditDocumentMessage? {
        guard !unsent.isEmpty else { return nil }
        if sentCopy == nil { sentCopy = confirmed }
        let operations = unsent
        unsent = []
        var changes: [TextChange] = []
        for op in operations {
            changes.append(contentsOf: sentCopy!.apply(op, reportingIn: encoding))
        }
        if changes.isEmpty {
            // Nothing the editor would see. With edits pending, the operations ride along with
            // the last one (they may remove what that edit removed, which `confirmed` still shows).
            if pending.isEmpty {
                for op in operations { confirmed.integrate(op) }
            } else {
                pending[pending.count - 1].operations.append(contentsOf: operations)
            }
            return nil
        }
        sentRevision += 1
        pending.append((sentRevision, operations))
        let text = sent
        return EditDocumentMessage(
            uri: uri, epoch: epoch, revision: editorRevision, changes: changes.map(Self.wireChange),
            hash: text.count <= hashLimit ? TextHash.sha256Hex(text) : nil)
    }

    /// Starts a new epoch in which the editor shows exactly `document`.
    func resync(to document: ReplicatingText) {
        let replica = confirmed.replica
        confirmed = document
        confirmed.replica = replica
        sentCopy = nil
        pending = []
        unsent = []
        refusal = nil
        epoch += 1
        sentRevision = 0
        confirmedRevision = 0
        editorRevision = 0
    }

    /// The text the editor shows after applying daemon revision `revision`, when known.
    func text(atRevision revision: Int) -> ReplicatingText? {
        if revision == sentRevision { return sent }
        if revision == confirmedRevision { return confirmed }
        return nil
    }

    static func wireChange(_ change: TextChange) -> WireChange {
        .range(WireRange(start: WirePosition(line: change.range.start.line, character: change.range.start.character),
                         end: WirePosition(line: change.range.end.line, character: change.range.end.character)),
               text: change.text)
    }
}
